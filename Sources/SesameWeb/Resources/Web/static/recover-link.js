// Where a recovery link an administrator made lands: the token is in the fragment (never sent with the page's
// request, so no server log holds it); Continue posts it, which opens a session that can only add a passkey or
// security key; then that session ends and the person signs in with the new passkey.

import { api, setCSRFToken } from "./api.js";
import { $, say, clear, busy, focus, show } from "./ui.js";
import { add } from "./recovery-add.js";
import { t } from "./i18n.js";

const token = location.hash.slice(1);

async function open() {
  clear();
  try {
    const signedIn = await api.recoveryLink(token);
    setCSRFToken(signedIn && signedIn.csrfToken);
  } catch (error) {
    say(error.message, "error");
    return;
  }
  // The fragment has done its work: keep it out of history.
  history.replaceState(null, "", location.pathname);
  show($("open-step"), false);
  show($("add-step"), true);
  focus($("add-heading"));
}


if (!/^[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/.test(token)) {
  show($("open-step"), false);
  say(t("web.recover-link.incomplete"), "error");
} else {
  $("link-open").addEventListener("click", () => busy($("link-open"), open));
}
$("add-passkey").addEventListener("click", () => busy($("add-passkey"), () => add()));
$("add-security-key").addEventListener("click", () => busy($("add-security-key"), () => add("security-key")));
document.body.dataset.ready = "true";
