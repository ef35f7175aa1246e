// Account page, the passkeys card (SesamePasskeys): the account's passkeys (with the Signal API after every
// change), adding a passkey or a security key, and the passkey offer after a password sign-in (its box is in the
// header card).

import { api, call } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show, el } from "./ui.js";
import { t } from "./i18n.js";
import { section, account, loadAccount, formatDate, failed, signals } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  passkeys: () => call("GET", "/api/account/passkeys"),
  renamePasskey: (id, name) => call("PATCH", `/api/account/passkeys/${encodeURIComponent(id)}`, { name }),
  deletePasskey: (id) => call("DELETE", `/api/account/passkeys/${encodeURIComponent(id)}`),
};

let passkeys = [];

async function signalAccepted() {
  const given = await signals();
  const accepted = given && given.allAcceptedCredentials;
  if (!accepted) return false;
  return webauthn.signalAllAcceptedCredentials(accepted.rpId, accepted.userId, accepted.allAcceptedCredentialIds);
}

async function loadPasskeys() {
  const answer = await endpoints.passkeys();
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
        await endpoints.renamePasskey(passkey.id, name);
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
        await endpoints.deletePasskey(passkey.id);
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

function wire() {
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
}

section({ name: "passkeys", anchor: "passkeys", wire, load: loadPasskeys, ready: maybeUpgrade });
