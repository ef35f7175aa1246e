// Sign-up page: username and name (and an email address where the site asks for one), then a passkey; a password
// only if the person asks for one.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show } from "./ui.js";

// The `email` setting as the page was rendered with it: off, optional or required.
const emailSetting = $("email-fields").dataset.email;

async function createAccount() {
  const username = $("username").value.trim();
  const displayName = $("display-name").value.trim();
  const email = emailSetting === "off" ? "" : $("email").value.trim();
  const wantPassword = $("want-password").checked;
  const password = $("new-password").value;
  if (!username) {
    say("Choose a username.", "error");
    return focus($("username"));
  }
  if (!displayName) {
    say("Enter your name.", "error");
    return focus($("display-name"));
  }
  if (emailSetting === "required" && !email) {
    say("Enter your email address: this site needs one.", "error");
    return focus($("email"));
  }
  if (wantPassword && password.length < 8) {
    say("Choose a password of at least 8 characters, or untick the password box.", "error");
    return focus($("new-password"));
  }
  if (!webauthn.supported()) {
    say("This browser can’t create passkeys. Try a current version of your browser.", "error");
    return;
  }
  clear();
  let options;
  try {
    options = await api.registrationOptions(username, displayName, email || undefined);
  } catch (error) {
    say(error.message, "error");
    const field = { invalid_display_name: "display-name", invalid_email: "email", email_required: "email" }[error.code];
    return focus($(field || "username"));
  }
  let credential;
  try {
    credential = await navigator.credentials.create({ publicKey: webauthn.creationOptions(options) });
  } catch (error) {
    say(
      error && error.name === "NotAllowedError"
        ? "The passkey wasn’t created: the request was cancelled or timed out. Your account isn’t created yet; try again when you’re ready."
        : webauthn.describeFailure(error),
      "error",
    );
    return focus($("signup-button"));
  }
  let result;
  try {
    result = await api.register({ credential: webauthn.credentialJSON(credential) });
  } catch (error) {
    say(error.message, "error");
    return focus($("username"));
  }
  setCSRFToken(result && result.csrfToken);
  if (wantPassword) {
    try {
      await api.setPassword(null, password);
    } catch (error) {
      say(`Your account and passkey are ready, but the password wasn’t set: ${error.message} You can set it on your account page.`, "error");
      setTimeout(() => location.assign("/account#password"), 4000);
      return;
    }
  }
  say("Your account is ready. Opening it…", "success");
  location.assign("/account");
}

show($("email-fields"), emailSetting !== "off");
$("email").required = emailSetting === "required";
$("email-hint").textContent = emailSetting === "required"
  ? "This site needs one. We’ll send a code to confirm it."
  : "Optional: for mail about your account. We’ll send a code to confirm it.";

$("want-password").addEventListener("change", () => {
  const on = $("want-password").checked;
  show($("password-fields"), on);
  $("new-password").required = on;
  if (on) focus($("new-password"));
});

$("signup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  busy($("signup-button"), createAccount);
});
