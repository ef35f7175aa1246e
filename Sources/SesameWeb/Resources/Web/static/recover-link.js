// Where a recovery link an administrator made lands: the token is in the fragment (never sent with the page's
// request, so no server log holds it); Continue posts it, which opens a session that can only add a passkey or
// security key; then that session ends and the person signs in with the new passkey.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show } from "./ui.js";

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

async function add(kind) {
  if (!webauthn.supported()) {
    say("This browser can’t create passkeys. Try a current version of your browser.", "error");
    return;
  }
  clear();
  try {
    const options = await api.passkeyOptions(kind);
    const credential = await navigator.credentials.create({ publicKey: webauthn.creationOptions(options) });
    await api.addPasskey({ credential: webauthn.credentialJSON(credential) });
  } catch (error) {
    say(error instanceof DOMException || error instanceof TypeError ? webauthn.describeFailure(error) : error.message,
      "error");
    return;
  }
  try {
    await api.signOut();
  } catch {
    // The limited session ends by itself within minutes.
  }
  show($("add-step"), false);
  show($("done"), true);
  say(kind === "security-key"
    ? "Security key added. To sign in with it, type your username and choose Continue."
    : "Passkey added. Sign in with it now.", "success");
  focus($("signin-link"));
}

if (!/^[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/.test(token)) {
  show($("open-step"), false);
  say("This link is incomplete. Open the whole link again, or ask your administrator for a new one.", "error");
} else {
  $("link-open").addEventListener("click", () => busy($("link-open"), open));
}
$("add-passkey").addEventListener("click", () => busy($("add-passkey"), () => add()));
$("add-security-key").addEventListener("click", () => busy($("add-security-key"), () => add("security-key")));
document.body.dataset.ready = "true";
