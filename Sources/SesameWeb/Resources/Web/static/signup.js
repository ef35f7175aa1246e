// Sign-up page: username and name (and an email address where the site asks for one), then a passkey; a password
// only if the person asks for one.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show } from "./ui.js";
import { t } from "./i18n.js";

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
    say(t("web.signup.choose-username"), "error");
    return focus($("username"));
  }
  if (!displayName) {
    say(t("web.signup.enter-name"), "error");
    return focus($("display-name"));
  }
  if (emailSetting === "required" && !email) {
    say(t("web.signup.email-needed"), "error");
    return focus($("email"));
  }
  if (wantPassword && password.length < 8) {
    say(t("web.signup.password-short"), "error");
    return focus($("new-password"));
  }
  if (!webauthn.supported()) {
    say(t("web.common.cannot-create-passkeys"), "error");
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
        ? t("web.signup.cancelled")
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
      say(t("web.signup.password-not-set", { reason: error.message }), "error");
      setTimeout(() => location.assign("/account#password"), 4000);
      return;
    }
  }
  say(t("web.signup.ready"), "success");
  location.assign("/account");
}

show($("email-fields"), emailSetting !== "off");
$("email").required = emailSetting === "required";
$("email-hint").textContent = emailSetting === "required"
  ? t("web.signup.email-required-hint")
  : t("web.signup.email-optional-hint");

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
        ? t("error.sign_up_closed")
        : t("error.invitation_required"),
      "error",
    );
  }
}
showPolicy();
