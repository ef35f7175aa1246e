// Account page, the header card (SesameAccount): who is signed in, the display name, signing out, and the account's
// current names given to the browser's credential manager (the Signal API).

import { api, call } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, busy, focus } from "./ui.js";
import { t } from "./i18n.js";
import { section, account, loadAccount, failed, signals } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  renameAccount: (displayName) => call("PATCH", "/api/account", { displayName }),
};

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

function render(account) {
  $("who").textContent = t("web.account.who", { name: account.user.displayName, username: account.user.username });
  if (document.activeElement !== $("display-name")) $("display-name").value = account.user.displayName;
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
      await endpoints.renameAccount(name);
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

function wire() {
  $("name-form").addEventListener("submit", saveName);
  $("sign-out").addEventListener("click", () => busy($("sign-out"), async () => {
    try {
      await api.signOut();
    } catch {
      // already signed out: go to the sign-in page anyway
    }
    location.assign("/signin");
  }));
}

section({ name: "header", wire, render, ready: signalUserDetailsOnce });
