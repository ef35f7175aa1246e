// Sign-up page: username and name (and an email address where the site asks for one), then a passkey; a password
// only if the person asks for one.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show } from "./ui.js";

// An invitation's link carries its token in the fragment (`#invitation=…`): it never reaches the server in the
// page's request; it goes with the options request.
const invitation = new URLSearchParams(location.hash.slice(1)).get("invitation");
// An invitation's link opened over this page changes only the fragment: read it afresh.
window.addEventListener("hashchange", () => location.reload());
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
    options = await api.registrationOptions(username, displayName, invitation, email || undefined);
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

// Say at once when the page cannot make an account: sign-up closed, or invitation-only without an invitation.
async function showPolicy() {
  let policy;
  try {
    policy = await api.registrationPolicy();
  } catch {
    return;
  }
  const closed = policy.signUp === "closed" || (policy.signUp === "invite-only" && !invitation);
  if (invitation && policy.signUp !== "closed") {
    $("signup-invited").hidden = false;
  }
  if (closed) {
    $("signup-form").hidden = true;
    say(
      policy.signUp === "closed"
        ? "This site isn’t taking new accounts. Ask the person who runs it for one."
        : "This site takes new accounts by invitation only. Open the link from your invitation.",
      "error",
    );
  }
}
showPolicy();
