// Recovery by email: ask for a code at the account's confirmed address, type it, and add a passkey or security key
// in the limited session it opens; then sign out of that session and sign in with the new passkey.

import { api, setCSRFToken } from "./api.js";
import { $, say, clear, busy, focus, show } from "./ui.js";
import { add } from "./recovery-add.js";
import { t } from "./i18n.js";

let recoveryToken = null;

async function ask() {
  const identifier = $("identifier").value.trim();
  if (!identifier) {
    say(t("web.recover.enter-identifier"), "error");
    return focus($("identifier"));
  }
  clear();
  try {
    const answer = await api.recoveryAsk(identifier);
    recoveryToken = answer.recoveryToken;
  } catch (error) {
    say(error.message, "error");
    return focus($("identifier"));
  }
  show($("ask-form"), false);
  show($("code-form"), true);
  focus($("recovery-code"));
}

async function verify() {
  const code = $("recovery-code").value.trim();
  if (!/^[0-9]{8}$/.test(code)) {
    say(t("web.recover.enter-code"), "error");
    return focus($("recovery-code"));
  }
  clear();
  try {
    const signedIn = await api.recoveryVerify(recoveryToken, code);
    setCSRFToken(signedIn && signedIn.csrfToken);
  } catch (error) {
    say(error.message, "error");
    return focus($("recovery-code"));
  }
  show($("code-form"), false);
  show($("add-step"), true);
  focus($("add-heading"));
}


$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  busy($("ask-button"), ask);
});
$("code-form").addEventListener("submit", (event) => {
  event.preventDefault();
  busy($("code-button"), verify);
});
$("add-passkey").addEventListener("click", () => busy($("add-passkey"), () => add()));
$("add-security-key").addEventListener("click", () => busy($("add-security-key"), () => add("security-key")));
