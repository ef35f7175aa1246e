// Account page: passkeys (with the Signal API after every change), verification codes, recovery codes, SMS,
// password, sessions, and the passkey offer after a password sign-in.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show, el, formatDate } from "./ui.js";

let account = null;
let passkeys = [];

function failed(error) {
  if (error && error.code === "unauthenticated") {
    location.assign("/signin");
    return;
  }
  say(error && error.message ? error.message : "Something went wrong. Please try again.", "error");
}

// Signals -----------------------------------------------------------------------------------------------------

// The server says what to send (GET /api/account/signals): the credential IDs it accepts now and the account's
// current names. A failure to fetch them only means the browser's list catches up later.

async function signals() {
  try {
    return await api.signals();
  } catch {
    return null;
  }
}

async function signalAccepted() {
  const given = await signals();
  const accepted = given && given.allAcceptedCredentials;
  if (!accepted) return false;
  return webauthn.signalAllAcceptedCredentials(accepted.rpId, accepted.userId, accepted.allAcceptedCredentialIds);
}

/**
 * Once per browser session, and again after the name changes: the credential manager shows the account's
 * current name on its passkeys.
 */
async function signalUserDetailsOnce() {
  const key = `sesame.userDetailsSignalled.${account.user.id}`;
  try {
    if (sessionStorage.getItem(key) === `${account.user.username}\n${account.user.displayName}`) return;
  } catch {
    // storage blocked: signal every time
  }
  await signalUserDetails(key);
}

async function signalUserDetails(key) {
  const given = await signals();
  const details = given && given.currentUserDetails;
  if (!details) return;
  if (await webauthn.signalCurrentUserDetails(details.rpId, details.userId, details.name, details.displayName)) {
    try {
      sessionStorage.setItem(key, `${account.user.username}\n${account.user.displayName}`);
    } catch {
      // nothing to remember it in
    }
  }
}

// Account summary ---------------------------------------------------------------------------------------------

async function loadAccount() {
  account = await api.account();
  setCSRFToken(account.csrfToken);
  $("who").textContent = `Signed in as ${account.user.displayName} (${account.user.username}).`;
  if (document.activeElement !== $("display-name")) $("display-name").value = account.user.displayName;
  $("password-username").value = account.user.username;
  renderPasswordState();
  renderFactorState();
  renderGroups();
}

/** The groups the person is in (read-only). */
function renderGroups() {
  const groups = Array.isArray(account.groups) ? account.groups : [];
  $("group-summary").textContent = groups.length === 0
    ? "You are in no group."
    : `You are in ${groups.length === 1 ? "the group" : "the groups"} ${groups.join(", ")}.`;
}

/** The apps the person may use: open to anyone, or allowing one of their groups (read-only). */
function renderAvailableApps(apps) {
  $("available-app-list").replaceChildren(...apps.map((app) =>
    el("li", { class: "app", dataset: { clientId: app.clientId } },
      el("div", { class: "details" }, el("p", { class: "title", text: app.name })))));
}

function renderPasswordState() {
  const has = account.hasPassword;
  $("password-status").textContent = has
    ? "You have a password. Passkeys are faster and can’t be phished."
    : "No password: you sign in with passkeys. A password is optional.";
  show($("current-password-field"), has);
  $("password-submit").textContent = has ? "Change password" : "Set password";
  show($("password-remove"), has);
}

function renderFactorState() {
  const factors = account.secondFactors || [];
  const totpOn = factors.includes("totp");
  $("totp-status").textContent = totpOn
    ? "An authenticator app gives you codes for signing in with your password."
    : "Not set up. An authenticator app adds a code to password sign-in.";
  show($("totp-start"), !totpOn);
  show($("totp-disable"), totpOn);
  const remaining = account.recoveryCodesRemaining || 0;
  $("recovery-status").textContent =
    remaining > 0
      ? `${remaining} unused recovery code${remaining === 1 ? "" : "s"} left. Each lets you in once if you lose your other ways in.`
      : "No recovery codes. Create some and keep them somewhere safe.";
  const smsOn = factors.includes("sms");
  $("sms-status").textContent = smsOn
    ? "Codes are sent to your confirmed mobile number."
    : "No number. Text message codes are the least safe option; prefer an authenticator app.";
  show($("sms-remove"), smsOn);
}

async function saveName(event) {
  event.preventDefault();
  const name = $("display-name").value.trim();
  if (!name) {
    say("Enter a name of 1 to 64 characters.", "error");
    return focus($("display-name"));
  }
  await busy($("display-name-save"), async () => {
    try {
      await api.renameAccount(name);
      await loadAccount();
      $("display-name").value = account.user.displayName;
      say(`Your name is now “${account.user.displayName}”.`, "success");
      await signalUserDetails(`sesame.userDetailsSignalled.${account.user.id}`);
    } catch (error) {
      failed(error);
      focus($("display-name"));
    }
  });
}

// Passkeys ----------------------------------------------------------------------------------------------------

async function loadPasskeys() {
  const answer = await api.passkeys();
  passkeys = Array.isArray(answer) ? answer : [];
  renderPasskeys();
}

function renderPasskeys() {
  const list = $("passkey-list");
  list.replaceChildren();
  if (passkeys.length === 0) {
    list.append(el("li", { class: "empty", text: "No passkeys yet. Add one to sign in without a password." }));
    return;
  }
  for (const passkey of passkeys) list.append(passkeyItem(passkey));
}

function passkeyItem(passkey) {
  const name = passkey.name || "Passkey";
  const provider = passkey.provider || "Unknown provider";
  const synced = passkey.backedUp === true;
  const eligible = passkey.backupEligible === true;
  // The provider's icon is served by this origin (/providers/{aaguid}/icon); the pages have a light theme only,
  // so the light variant is used. Anything else gets the generic passkey icon.
  const icon = typeof passkey.providerIcon === "string" && /^\/providers\/[0-9a-f-]{36}\/icon$/.test(passkey.providerIcon)
    ? passkey.providerIcon
    : "/static/passkey.svg";
  const item = el("li", { class: "passkey", dataset: { id: passkey.id } });
  const title = el("span", { class: "name", text: name });
  item.append(
    el("img", { class: "provider-icon", src: icon, alt: "", width: 32, height: 32 }),
    el(
      "div",
      { class: "details" },
      el("p", { class: "title" }, title, synced ? el("span", { class: "badge synced", text: "Synced" }) : null,
        !synced && !eligible ? el("span", { class: "badge device", text: "This device only" }) : null),
      el("p", { class: "provider", text: provider }),
      el("p", { class: "dates", text: `Created ${formatDate(passkey.createdAt)} · Last used ${formatDate(passkey.lastUsedAt)}` }),
    ),
  );
  const actions = el("div", { class: "actions" });
  const rename = el("button", { type: "button", class: "secondary rename", "aria-label": `Rename ${name}`, text: "Rename" });
  const remove = el("button", { type: "button", class: "danger delete", "aria-label": `Delete ${name}`, text: "Delete" });
  rename.addEventListener("click", () => startRename(item, passkey));
  remove.addEventListener("click", () => confirmDelete(item, passkey));
  actions.append(rename, remove);
  item.append(actions);
  return item;
}

function startRename(item, passkey) {
  const inputId = `rename-${passkey.id}`;
  const form = el("form", { class: "rename-form", novalidate: true },
    el("label", { for: inputId, text: "New name" }),
    el("input", { id: inputId, type: "text", required: true, maxlength: 64, value: passkey.name || "" }),
    el("button", { type: "submit", class: "primary", text: "Save" }),
    el("button", { type: "button", class: "secondary cancel", text: "Cancel" }));
  const actions = item.querySelector(".actions");
  actions.replaceWith(form);
  const input = form.querySelector("input");
  focus(input);
  input.select();
  form.querySelector(".cancel").addEventListener("click", () => {
    form.replaceWith(actions);
    focus(actions.querySelector(".rename"));
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (!name) {
      say("Enter a name for the passkey.", "error");
      return focus(input);
    }
    await busy(form.querySelector('button[type="submit"]'), async () => {
      try {
        await api.renamePasskey(passkey.id, name);
        await loadPasskeys();
        await signalAccepted();
        say(`Renamed the passkey to “${name}”.`, "success");
        focus(document.querySelector(`li.passkey[data-id="${CSS.escape(passkey.id)}"] .rename`));
      } catch (error) {
        failed(error);
      }
    });
  });
}

function confirmDelete(item, passkey) {
  const name = passkey.name || "this passkey";
  const actions = item.querySelector(".actions");
  const box = el("div", { class: "confirm", role: "group", "aria-label": "Confirm delete" },
    el("p", { text: `Delete “${name}”? You won’t be able to sign in with it any more.` }),
    el("button", { type: "button", class: "danger confirm-delete", text: "Delete passkey" }),
    el("button", { type: "button", class: "secondary cancel", text: "Keep it" }));
  actions.replaceWith(box);
  focus(box.querySelector(".cancel"));
  box.querySelector(".cancel").addEventListener("click", () => {
    box.replaceWith(actions);
    focus(actions.querySelector(".delete"));
  });
  box.querySelector(".confirm-delete").addEventListener("click", async (event) => {
    await busy(event.currentTarget, async () => {
      try {
        await api.deletePasskey(passkey.id);
        await loadPasskeys();
        await loadAccount();
        await signalAccepted();
        say(`Deleted “${name}”. Your device may still list it until it catches up.`, "success");
        focus($("add-passkey"));
      } catch (error) {
        failed(error);
        box.replaceWith(actions);
      }
    });
  });
}

/**
 * Creates a passkey for this account; `conditional` asks the browser to do it without a prompt. `kind`
 * "security-key" asks for a credential the key need not store (it signs in after the username is typed).
 */
async function createPasskey(conditional, signal, kind) {
  const options = await api.passkeyOptions(kind, conditional ? "conditional" : undefined);
  const request = { publicKey: webauthn.creationOptions(options) };
  if (conditional) request.mediation = "conditional";
  if (signal) request.signal = signal;
  const credential = await navigator.credentials.create(request);
  await api.addPasskey({ credential: webauthn.credentialJSON(credential) });
  await loadPasskeys();
  await loadAccount();
  await signalAccepted();
}

async function addPasskey(kind) {
  clear();
  const button = kind === "security-key" ? $("add-security-key") : $("add-passkey");
  await busy(button, async () => {
    try {
      await createPasskey(false, undefined, kind);
      say(kind === "security-key"
        ? "Security key added. To sign in with it, type your username and choose Continue."
        : "Passkey added. You can sign in with it from now on.", "success");
      focus($("passkey-list").lastElementChild?.querySelector(".rename") || button);
    } catch (error) {
      if (error instanceof DOMException || error instanceof TypeError) say(webauthn.describeFailure(error), "error");
      else failed(error);
    }
  });
}

// Passkey offer after a password sign-in -------------------------------------------------------------------------

const conditionalCreateWait = 8000; // milliseconds

function notNowKey() {
  return `sesame.passkeyOffer.notNow.${account.user.id}`;
}

function offer() {
  try {
    if (localStorage.getItem(notNowKey())) return;
  } catch {
    // storage blocked: ask anyway, once per page
  }
  show($("upgrade"), true);
  focus($("upgrade-heading"));
}

async function maybeUpgrade() {
  const method = (account.session && account.session.method) || "";
  if (!method.startsWith("password") || account.passkeyCount > 0 || !webauthn.supported()) return;
  const caps = await webauthn.capabilities();
  if (caps.conditionalCreate === true) {
    // The browser decides at once whether it can save a passkey without asking (it can right after the person
    // used a saved password). Some leave the request open instead of declining; after a while, ask instead.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), conditionalCreateWait);
    try {
      await createPasskey(true, controller.signal);
      say("A passkey for this account was saved on this device. Next time, sign in with it: no password needed.", "success");
      return;
    } catch {
      // Declined or not decided in time: ask instead.
    } finally {
      clearTimeout(timer);
    }
  }
  offer();
}

// Verification codes ------------------------------------------------------------------------------------------

function groupSecret(secret) {
  return (secret || "").replace(/(.{4})(?=.)/g, "$1 ");
}

async function startTOTP() {
  clear();
  await busy($("totp-start"), async () => {
    try {
      const setup = await api.totpStart();
      const uri = setup.otpauthURI;
      const apple = setup.appleOtpauthURI;
      const qr = setup.qrCodeURL;
      $("totp-secret").textContent = groupSecret(setup.secret);
      $("totp-uri").textContent = uri || "";
      if (typeof qr === "string" && qr.startsWith("/") && !qr.startsWith("//")) $("totp-qr").src = `${qr}${qr.includes("?") ? "&" : "?"}t=${Date.now()}`;
      if (typeof apple === "string" && apple.startsWith("apple-otpauth:")) $("totp-apple").href = apple;
      show($("totp-apple").parentElement, typeof apple === "string");
      show($("totp-setup"), true);
      say("Add the account to your authenticator app, then enter the code it shows.", "info");
      focus($("totp-code"));
    } catch (error) {
      failed(error);
    }
  });
}

async function confirmTOTP(event) {
  event.preventDefault();
  const code = $("totp-code").value.replace(/\s+/g, "");
  if (!/^[0-9]{6,8}$/.test(code)) {
    say("Enter the 6-digit code from your authenticator app.", "error");
    return focus($("totp-code"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.totpConfirm(code);
      $("totp-code").value = "";
      show($("totp-setup"), false);
      await loadAccount();
      say("Verification codes are on. You’ll be asked for one after your password.", "success");
      focus($("totp-heading"));
    } catch (error) {
      failed(error);
      focus($("totp-code"));
    }
  });
}

async function disableTOTP() {
  await busy($("totp-disable"), async () => {
    try {
      await api.totpDisable();
      await loadAccount();
      say("Verification codes are off.", "success");
    } catch (error) {
      failed(error);
    }
  });
}

// Recovery codes ----------------------------------------------------------------------------------------------

function showRecoveryCodes(codes) {
  const list = $("recovery-list");
  list.replaceChildren(...codes.map((code) => el("li", {}, el("code", { text: code }))));
  show($("recovery-codes"), true);
}

async function generateRecoveryCodes() {
  await busy($("recovery-generate"), async () => {
    try {
      const result = await api.recoveryCodes();
      const codes = Array.isArray(result && result.codes) ? result.codes : [];
      showRecoveryCodes(codes);
      await loadAccount();
      say("New recovery codes are below. Save them now: they won’t be shown again.", "success");
      focus($("recovery-heading"));
    } catch (error) {
      failed(error);
    }
  });
}

// Email address -----------------------------------------------------------------------------------------------

let email = null;

async function loadEmail() {
  try {
    email = await api.emailShow();
  } catch (error) {
    // Addresses are off on this server (email_not_enabled): the section stays hidden.
    email = null;
    if (error && error.code !== "email_not_enabled") failed(error);
  }
  show($("email"), email !== null);
  if (!email) return;
  let status;
  if (email.address && email.pending) {
    status = `Your address is ${email.address}. We sent a code to ${email.pending}: enter it to change to that address.`;
  } else if (email.address) {
    status = `Your address is ${email.address}, confirmed.`;
  } else if (email.pending) {
    status = `We sent a code to ${email.pending}. Enter it, or open the link in the mail, to confirm the address.`;
  } else {
    status = email.setting === "required"
      ? "This site needs an email address. Add one and confirm it."
      : "No email address. Add one to get mail about your account.";
  }
  $("email-status").textContent = status;
  $("email-submit").textContent = email.address ? "Change address" : "Send a code";
  show($("email-confirm-form"), Boolean(email.pending));
  show($("email-remove"), Boolean(email.address || email.pending) && !(email.setting === "required" && email.address));
}

async function startEmail(event) {
  event.preventDefault();
  const address = $("email-address").value.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) {
    say("Enter an email address like name@example.org.", "error");
    return focus($("email-address"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.emailStart(address);
      $("email-address").value = "";
      await loadEmail();
      say("We sent a code to that address. Enter it to confirm, or open the link in the mail.", "info");
      focus($("email-code"));
    } catch (error) {
      failed(error);
      focus($("email-address"));
    }
  });
}

async function confirmEmail(event) {
  event.preventDefault();
  const code = $("email-code").value.trim();
  await busy(event.submitter, async () => {
    try {
      const verified = await api.emailConfirm(code);
      $("email-code").value = "";
      await loadEmail();
      say(`Your email address ${verified.address} is confirmed.`, "success");
    } catch (error) {
      failed(error);
      focus($("email-code"));
    }
  });
}

async function removeEmail() {
  await busy($("email-remove"), async () => {
    try {
      await api.emailRemove();
      await loadEmail();
      say("Your email address was removed.", "success");
    } catch (error) {
      failed(error);
    }
  });
}

// SMS ---------------------------------------------------------------------------------------------------------

async function startSMS(event) {
  event.preventDefault();
  const phone = $("sms-phone").value.replace(/[\s()-]/g, "");
  if (!/^\+[1-9][0-9]{6,14}$/.test(phone)) {
    say("Enter your mobile number in international format, starting with +.", "error");
    return focus($("sms-phone"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.smsStart(phone);
      show($("sms-confirm-form"), true);
      say("We sent a code to that number. Enter it to confirm.", "info");
      focus($("sms-code"));
    } catch (error) {
      failed(error);
    }
  });
}

async function confirmSMS(event) {
  event.preventDefault();
  const code = $("sms-code").value.trim();
  await busy(event.submitter, async () => {
    try {
      await api.smsConfirm(code);
      show($("sms-confirm-form"), false);
      $("sms-code").value = "";
      await loadAccount();
      say("Your number is confirmed.", "success");
    } catch (error) {
      failed(error);
      focus($("sms-code"));
    }
  });
}

async function removeSMS() {
  await busy($("sms-remove"), async () => {
    try {
      await api.smsRemove();
      await loadAccount();
      say("Your number was removed.", "success");
    } catch (error) {
      failed(error);
    }
  });
}

// Password ----------------------------------------------------------------------------------------------------

async function savePassword(event) {
  event.preventDefault();
  const current = $("current-password").value;
  const next = $("new-password").value;
  if (account.hasPassword && !current) {
    say("Enter your current password to change it.", "error");
    return focus($("current-password"));
  }
  if (next.length < 8) {
    say("Choose a password of at least 8 characters.", "error");
    return focus($("new-password"));
  }
  await busy($("password-submit"), async () => {
    try {
      const result = await api.setPassword(account.hasPassword ? current : null, next);
      $("current-password").value = "";
      $("new-password").value = "";
      const others = result && result.count ? ` ${result.count} other session${result.count === 1 ? " was" : "s were"} signed out.` : "";
      say((result && result.status === "changed" ? "Password changed." : "Password set.") + others, "success");
      await loadAccount();
      await loadSessions();
    } catch (error) {
      failed(error);
    }
  });
}

async function removePassword() {
  await busy($("password-remove"), async () => {
    try {
      await api.removePassword();
      await loadAccount();
      say("Your password was removed. You sign in with passkeys.", "success");
    } catch (error) {
      failed(error);
    }
  });
}

// Sessions ----------------------------------------------------------------------------------------------------

function describeAgent(agent) {
  if (!agent) return "Unknown device";
  const browser = /Edg\//.test(agent) ? "Edge" : /Firefox\//.test(agent) ? "Firefox" : /Chrom(e|ium)\//.test(agent) ? "Chrome" : /Safari\//.test(agent) ? "Safari" : null;
  const system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS" : /Mac OS X/.test(agent) ? "macOS" : /Windows/.test(agent) ? "Windows" : /Linux/.test(agent) ? "Linux" : null;
  if (browser && system) return `${browser} on ${system}`;
  return browser || system || "App or other device";
}

/** How a session was established, in words (`method` values of the sessions API). */
const methodWords = {
  passkey: "a passkey",
  "passkey-up": "a passkey without screen lock or PIN",
  password: "a password",
  "password+totp": "a password and an authenticator code",
  "password+sms": "a password and a text message code",
  "password+recovery": "a password and a recovery code",
  "email-code": "a code sent by email (to add a passkey only)",
  "recovery-link": "a recovery link from an administrator (to add a passkey only)",
};

async function loadSessions() {
  const sessions = await api.sessions();
  const list = $("session-list");
  list.replaceChildren();
  for (const session of Array.isArray(sessions) ? sessions : []) {
    const item = el("li", { class: "session", dataset: { id: session.id } },
      el("div", { class: "details" },
        el("p", { class: "title" }, describeAgent(session.userAgent), session.current ? el("span", { class: "badge", text: "This device" }) : null),
        el("p", { class: "dates", text: `Signed in ${formatDate(session.createdAt)} with ${methodWords[session.method] || session.method} · Last active ${formatDate(session.lastSeenAt)}` })));
    const button = el("button", { type: "button", class: "secondary", text: session.current ? "Sign out" : "Sign out this session" });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await api.revokeSession(session.id);
        if (session.current) return location.assign("/signin");
        await loadSessions();
        say("That session is signed out.", "success");
        focus($("sessions-heading"));
      } catch (error) {
        failed(error);
      }
    }));
    item.append(el("div", { class: "actions" }, button));
    list.append(item);
  }
}

// Apps with access ---------------------------------------------------------------------------------------------

/** What an app's scopes let it do, in words (scopes of the identity provider). */
function describeScopes(scopes) {
  const sees = ["who you are"];
  if (scopes.includes("profile")) sees.push("your username and name");
  if (scopes.includes("groups")) sees.push("the groups you are in");
  const away = scopes.includes("offline_access") ? " · Stays connected while you’re away" : "";
  return `Can see ${sees.join(" and ")}${away}`;
}

async function loadApps() {
  const body = await api.apps();
  const apps = Array.isArray(body && body.apps) ? body.apps : [];
  renderAvailableApps(Array.isArray(body && body.available) ? body.available : []);
  const list = $("app-list");
  list.replaceChildren();
  show($("apps-empty"), apps.length === 0);
  for (const app of apps) {
    const item = el("li", { class: "app", dataset: { clientId: app.clientId } },
      el("div", { class: "details" },
        el("p", { class: "title", text: app.name }),
        el("p", { class: "dates", text: `Since ${formatDate(app.since)} · ${describeScopes(app.scopes)}` })));
    const button = el("button", { type: "button", class: "secondary", text: "Remove access",
      "aria-label": `Remove access for ${app.name}` });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await api.revokeApp(app.clientId);
        await loadApps();
        say(`${app.name} no longer has access. It will ask you again next time.`, "success");
        focus($("apps-heading"));
      } catch (error) {
        failed(error);
      }
    }));
    item.append(el("div", { class: "actions" }, button));
    list.append(item);
  }
}

// Sign out ---------------------------------------------------------------------------------------------------------

function wire() {
  $("name-form").addEventListener("submit", saveName);
  $("add-passkey").addEventListener("click", () => addPasskey());
  $("add-security-key").addEventListener("click", () => addPasskey("security-key"));
  $("upgrade-create").addEventListener("click", async () => {
    await busy($("upgrade-create"), async () => {
      try {
        await createPasskey(false);
        show($("upgrade"), false);
        say("Passkey created. Next time, sign in with it: no password needed.", "success");
        focus($("passkeys-heading"));
      } catch (error) {
        if (error instanceof DOMException || error instanceof TypeError) say(webauthn.describeFailure(error), "error");
        else failed(error);
      }
    });
  });
  $("upgrade-later").addEventListener("click", () => {
    try {
      localStorage.setItem(notNowKey(), new Date().toISOString());
    } catch {
      // storage blocked: the offer just comes back next time
    }
    show($("upgrade"), false);
    say("OK. You can add a passkey any time under Passkeys.", "info");
    focus($("add-passkey"));
  });
  $("sign-out").addEventListener("click", () => busy($("sign-out"), async () => {
    try {
      await api.signOut();
    } catch {
      // already signed out: go to the sign-in page anyway
    }
    location.assign("/signin");
  }));
  $("totp-start").addEventListener("click", startTOTP);
  $("totp-confirm-form").addEventListener("submit", confirmTOTP);
  $("totp-disable").addEventListener("click", disableTOTP);
  $("recovery-generate").addEventListener("click", generateRecoveryCodes);
  $("email-form").addEventListener("submit", startEmail);
  $("email-confirm-form").addEventListener("submit", confirmEmail);
  $("email-remove").addEventListener("click", removeEmail);
  $("sms-form").addEventListener("submit", startSMS);
  $("sms-confirm-form").addEventListener("submit", confirmSMS);
  $("sms-remove").addEventListener("click", removeSMS);
  $("password-form").addEventListener("submit", savePassword);
  $("password-remove").addEventListener("click", removePassword);
  $("sign-out-all").addEventListener("click", () => busy($("sign-out-all"), async () => {
    try {
      await api.revokeAllSessions();
      location.assign("/signin");
    } catch (error) {
      failed(error);
    }
  }));
}

async function start() {
  wire();
  try {
    await loadAccount();
  } catch (error) {
    return failed(error);
  }
  // Sections whose endpoints fail stay visible with a message; the rest of the page keeps working.
  for (const load of [loadEmail, loadPasskeys, loadApps, loadSessions]) {
    try {
      await load();
    } catch (error) {
      failed(error);
    }
  }
  document.body.dataset.ready = "true";
  const section = ["email", "passkeys", "totp", "recovery", "sms", "password", "apps", "sessions"].find((id) => location.hash === `#${id}`);
  if (section) focus($(`${section}-heading`));
  await signalUserDetailsOnce();
  await maybeUpgrade();
}

start();
