// Account page: passkeys (with the Signal API after every change), verification codes, recovery codes, SMS,
// password, sessions, and the passkey offer after a password sign-in.

import { api, call, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show, el } from "./ui.js";
import { t, tn, formatDateIn, locale, languages } from "./i18n.js";

let account = null;
let passkeys = [];

/** A date and time in the page's language; "never" when there is none. */
function formatDate(value) {
  return value ? formatDateIn(value) : t("web.account.never");
}

function failed(error) {
  if (error && error.code === "unauthenticated") {
    location.assign("/signin");
    return;
  }
  say(error && error.message ? error.message : t("web.account.failed"), "error");
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
  $("who").textContent = t("web.account.who", { name: account.user.displayName, username: account.user.username });
  if (document.activeElement !== $("display-name")) $("display-name").value = account.user.displayName;
  $("password-username").value = account.user.username;
  renderPasswordState();
  renderFactorState();
  renderGroups();
  renderLanguage();
}

// Language ----------------------------------------------------------------------------------------------------

/** The shipped languages in their own names, and "your browser's choice"; the saved one selected. */
function renderLanguage() {
  const select = $("language-select");
  if (select.options.length === 1) {
    for (const language of languages) {
      const option = el("option", { value: language.tag, text: language.name });
      option.lang = language.tag;
      select.append(option);
    }
  }
  select.value = typeof account.language === "string" ? account.language : "";
}

/** Saves the choice (or clears it) and reloads: the page then comes in the language chosen. */
async function saveLanguage(event) {
  event.preventDefault();
  const value = $("language-select").value;
  await busy($("language-save"), async () => {
    try {
      await call("PUT", "/api/account/language", { language: value === "" ? null : value });
      location.reload();
    } catch (error) {
      failed(error);
      focus($("language-select"));
    }
  });
}

/** The groups the person is in (read-only). */
function renderGroups() {
  const groups = Array.isArray(account.groups) ? account.groups : [];
  $("group-summary").textContent = groups.length === 0
    ? t("web.account.groups.none")
    : tn("web.account.groups.member", groups.length, { groups: new Intl.ListFormat(locale).format(groups) });
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
    ? t("web.account.password.has")
    : t("web.account.password.none");
  show($("current-password-field"), has);
  $("password-submit").textContent = has ? t("web.account.password.change") : t("web.account.password.set");
  show($("password-remove"), has);
}

function renderFactorState() {
  const factors = account.secondFactors || [];
  const totpOn = factors.includes("totp");
  $("totp-status").textContent = totpOn
    ? t("web.account.totp.on")
    : t("web.account.totp.off");
  show($("totp-start"), !totpOn);
  show($("totp-disable"), totpOn);
  const remaining = account.recoveryCodesRemaining || 0;
  $("recovery-status").textContent =
    remaining > 0
      ? tn("web.account.recovery.remaining", remaining)
      : t("web.account.recovery.none");
  const smsOn = factors.includes("sms");
  $("sms-status").textContent = smsOn
    ? t("web.account.sms.on")
    : t("web.account.sms.off");
  show($("sms-remove"), smsOn);
}

async function saveName(event) {
  event.preventDefault();
  const name = $("display-name").value.trim();
  if (!name) {
    say(t("web.account.name.empty"), "error");
    return focus($("display-name"));
  }
  await busy($("display-name-save"), async () => {
    try {
      await api.renameAccount(name);
      await loadAccount();
      $("display-name").value = account.user.displayName;
      say(t("web.account.name.saved", { name: account.user.displayName }), "success");
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
    list.append(el("li", { class: "empty", text: t("web.account.passkeys.empty") }));
    return;
  }
  for (const passkey of passkeys) list.append(passkeyItem(passkey));
}

function passkeyItem(passkey) {
  const name = passkey.name || t("web.account.passkeys.default-name");
  const provider = passkey.provider || t("web.account.passkeys.unknown-provider");
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
      el("p", { class: "title" }, title, synced ? el("span", { class: "badge synced", text: t("web.account.passkeys.synced") }) : null,
        !synced && !eligible ? el("span", { class: "badge device", text: t("web.account.passkeys.device-only") }) : null),
      el("p", { class: "provider", text: provider }),
      el("p", { class: "dates", text: t("web.account.passkeys.dates", { created: formatDate(passkey.createdAt), used: formatDate(passkey.lastUsedAt) }) }),
    ),
  );
  const actions = el("div", { class: "actions" });
  const rename = el("button", { type: "button", class: "secondary rename", "aria-label": t("web.account.passkeys.rename-label", { name }), text: t("web.account.passkeys.rename") });
  const remove = el("button", { type: "button", class: "danger delete", "aria-label": t("web.account.passkeys.delete-label", { name }), text: t("web.account.passkeys.delete") });
  rename.addEventListener("click", () => startRename(item, passkey));
  remove.addEventListener("click", () => confirmDelete(item, passkey));
  actions.append(rename, remove);
  item.append(actions);
  return item;
}

function startRename(item, passkey) {
  const inputId = `rename-${passkey.id}`;
  const form = el("form", { class: "rename-form", novalidate: true },
    el("label", { for: inputId, text: t("web.account.passkeys.new-name") }),
    el("input", { id: inputId, type: "text", required: true, maxlength: 64, value: passkey.name || "" }),
    el("button", { type: "submit", class: "primary", text: t("web.account.passkeys.save") }),
    el("button", { type: "button", class: "secondary cancel", text: t("web.account.passkeys.cancel") }));
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
      say(t("web.account.passkeys.name-empty"), "error");
      return focus(input);
    }
    await busy(form.querySelector('button[type="submit"]'), async () => {
      try {
        await api.renamePasskey(passkey.id, name);
        await loadPasskeys();
        await signalAccepted();
        say(t("web.account.passkeys.renamed", { name }), "success");
        focus(document.querySelector(`li.passkey[data-id="${CSS.escape(passkey.id)}"] .rename`));
      } catch (error) {
        failed(error);
      }
    });
  });
}

function confirmDelete(item, passkey) {
  const name = passkey.name || t("web.account.passkeys.default-name");
  const actions = item.querySelector(".actions");
  const box = el("div", { class: "confirm", role: "group", "aria-label": t("web.account.passkeys.confirm-label") },
    el("p", { text: t("web.account.passkeys.confirm", { name }) }),
    el("button", { type: "button", class: "danger confirm-delete", text: t("web.account.passkeys.confirm-delete") }),
    el("button", { type: "button", class: "secondary cancel", text: t("web.account.passkeys.keep") }));
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
        say(t("web.account.passkeys.deleted", { name }), "success");
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
        ? t("web.account.passkeys.security-key-added")
        : t("web.account.passkeys.added"), "success");
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
      say(t("web.account.upgrade.saved"), "success");
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
      say(t("web.account.totp.started"), "info");
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
    say(t("web.account.totp.code-invalid"), "error");
    return focus($("totp-code"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.totpConfirm(code);
      $("totp-code").value = "";
      show($("totp-setup"), false);
      await loadAccount();
      say(t("web.account.totp.enabled"), "success");
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
      say(t("web.account.totp.disabled"), "success");
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
      say(t("web.account.recovery.created"), "success");
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
    status = t("web.account.email.status-changing", { address: email.address, pending: email.pending });
  } else if (email.address) {
    status = t("web.account.email.status-confirmed", { address: email.address });
  } else if (email.pending) {
    status = t("web.account.email.status-pending", { pending: email.pending });
  } else {
    status = email.setting === "required"
      ? t("web.account.email.status-required")
      : t("web.account.email.status-none");
  }
  $("email-status").textContent = status;
  $("email-submit").textContent = email.address ? t("web.account.email.change") : t("web.account.email.send");
  show($("email-confirm-form"), Boolean(email.pending));
  show($("email-remove"), Boolean(email.address || email.pending) && !(email.setting === "required" && email.address));
}

async function startEmail(event) {
  event.preventDefault();
  const address = $("email-address").value.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) {
    say(t("web.account.email.invalid"), "error");
    return focus($("email-address"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.emailStart(address);
      $("email-address").value = "";
      await loadEmail();
      say(t("web.account.email.sent"), "info");
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
      say(t("web.account.email.confirmed", { address: verified.address }), "success");
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
      say(t("web.account.email.removed"), "success");
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
    say(t("web.account.sms.phone-invalid"), "error");
    return focus($("sms-phone"));
  }
  await busy(event.submitter, async () => {
    try {
      await api.smsStart(phone);
      show($("sms-confirm-form"), true);
      say(t("web.account.sms.sent"), "info");
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
      say(t("web.account.sms.confirmed"), "success");
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
      say(t("web.account.sms.removed"), "success");
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
    say(t("web.account.password.current-missing"), "error");
    return focus($("current-password"));
  }
  if (next.length < 8) {
    say(t("web.account.password.too-short"), "error");
    return focus($("new-password"));
  }
  await busy($("password-submit"), async () => {
    try {
      const result = await api.setPassword(account.hasPassword ? current : null, next);
      $("current-password").value = "";
      $("new-password").value = "";
      const others = result && result.count ? ` ${tn("web.account.password.others-signed-out", result.count)}` : "";
      say((result && result.status === "changed" ? t("web.account.password.changed") : t("web.account.password.was-set")) + others, "success");
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
      say(t("web.account.password.removed"), "success");
    } catch (error) {
      failed(error);
    }
  });
}

// Sessions ----------------------------------------------------------------------------------------------------

function describeAgent(agent) {
  if (!agent) return t("web.account.sessions.unknown-device");
  const browser = /Edg\//.test(agent) ? "Edge" : /Firefox\//.test(agent) ? "Firefox" : /Chrom(e|ium)\//.test(agent) ? "Chrome" : /Safari\//.test(agent) ? "Safari" : null;
  const system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS" : /Mac OS X/.test(agent) ? "macOS" : /Windows/.test(agent) ? "Windows" : /Linux/.test(agent) ? "Linux" : null;
  if (browser && system) return t("web.account.sessions.agent", { browser, system });
  return browser || system || t("web.account.sessions.other-device");
}

/** How a session was established, in words (`method` values of the sessions API). */
const methodWords = {
  passkey: t("web.account.sessions.method.passkey"),
  "passkey-up": t("web.account.sessions.method.passkey-up"),
  password: t("web.account.sessions.method.password"),
  "password+totp": t("web.account.sessions.method.password-totp"),
  "password+sms": t("web.account.sessions.method.password-sms"),
  "password+recovery": t("web.account.sessions.method.password-recovery"),
  "email-code": t("web.account.sessions.method.email-code"),
  "recovery-link": t("web.account.sessions.method.recovery-link"),
};

async function loadSessions() {
  const sessions = await api.sessions();
  const list = $("session-list");
  list.replaceChildren();
  for (const session of Array.isArray(sessions) ? sessions : []) {
    const item = el("li", { class: "session", dataset: { id: session.id } },
      el("div", { class: "details" },
        el("p", { class: "title" }, describeAgent(session.userAgent), session.current ? el("span", { class: "badge", text: t("web.account.sessions.this-device") }) : null),
        el("p", { class: "dates", text: t("web.account.sessions.dates", { signedIn: formatDate(session.createdAt), method: methodWords[session.method] || session.method, seen: formatDate(session.lastSeenAt) }) })));
    const button = el("button", { type: "button", class: "secondary", text: session.current ? t("web.account.sign-out") : t("web.account.sessions.sign-out-one") });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await api.revokeSession(session.id);
        if (session.current) return location.assign("/signin");
        await loadSessions();
        say(t("web.account.sessions.signed-out"), "success");
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
  const profile = scopes.includes("profile");
  const groups = scopes.includes("groups");
  const sees = profile && groups ? t("web.account.apps.sees-profile-groups")
    : profile ? t("web.account.apps.sees-profile")
    : groups ? t("web.account.apps.sees-groups")
    : t("web.account.apps.sees-identity");
  return scopes.includes("offline_access") ? `${sees} · ${t("web.account.apps.offline")}` : sees;
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
        el("p", { class: "dates", text: t("web.account.apps.since", { date: formatDate(app.since), scopes: describeScopes(app.scopes) }) })));
    const button = el("button", { type: "button", class: "secondary", text: t("web.account.apps.remove"),
      "aria-label": t("web.account.apps.remove-label", { app: app.name }) });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await api.revokeApp(app.clientId);
        await loadApps();
        say(t("web.account.apps.removed", { app: app.name }), "success");
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
  $("language-form").addEventListener("submit", saveLanguage);
  $("add-passkey").addEventListener("click", () => addPasskey());
  $("add-security-key").addEventListener("click", () => addPasskey("security-key"));
  $("upgrade-create").addEventListener("click", async () => {
    await busy($("upgrade-create"), async () => {
      try {
        await createPasskey(false);
        show($("upgrade"), false);
        say(t("web.account.upgrade.created"), "success");
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
    say(t("web.account.upgrade.later-said"), "info");
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
  const section = ["language", "email", "passkeys", "totp", "recovery", "sms", "password", "apps", "sessions"].find((id) => location.hash === `#${id}`);
  if (section) focus($(`${section}-heading`));
  await signalUserDetailsOnce();
  await maybeUpgrade();
}

start();
