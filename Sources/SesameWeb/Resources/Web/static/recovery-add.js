// The last step of both ways back into an account (recovery by email, an administrator's recovery link): in the
// limited session they open, add a passkey or security key, end that session and send the person to sign in with it.

import { api } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, focus, show } from "./ui.js";
import { t } from "./i18n.js";

/** Adds a passkey (or, with `kind` "security-key", a security key) and signs the limited session out. */
export async function add(kind) {
  if (!webauthn.supported()) {
    say(t("web.common.cannot-create-passkeys"), "error");
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
    ? t("web.recovery.security-key-added")
    : t("web.recovery.passkey-added"), "success");
  focus($("signin-link"));
}
