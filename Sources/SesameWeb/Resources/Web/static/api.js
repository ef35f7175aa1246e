// Talking to the Sesame API: JSON in and out, the CSRF header on writes once signed in, and one human sentence
// for every error code the API can answer with.

import { credentialJSON, requestOptions } from "./webauthn.js";

let csrfToken = null;

/** Remember the CSRF token a sign-in or `GET /api/account` returned; it goes with every write. */
export function setCSRFToken(token) {
  csrfToken = typeof token === "string" && token.length > 0 ? token : null;
}

/** An API failure: `code` is the API's error code, `status` the HTTP status. `message` is for people. */
export class APIFailure extends Error {
  constructor(status, code, serverMessage, retryAfter, data) {
    super(humanMessage(code, serverMessage, retryAfter));
    this.name = "APIFailure";
    this.data = data && typeof data === "object" ? data : {};
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function minutes(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 60) return "a minute";
  const m = Math.ceil(seconds / 60);
  return `${m} minutes`;
}

// One entry per code in the server's `APIErrorCode`, and no others (`VocabularyTests` holds the two together).
// A function entry builds the sentence from the server's message and the Retry-After seconds.
const messages = {
  // The request itself
  malformed_json: "Something went wrong sending that. Reload the page and try again.",
  unsupported_media_type: "Something went wrong sending that. Reload the page and try again.",
  body_too_large: "That was too long. Shorten it and try again.",
  bad_request: "Something went wrong sending that. Reload the page and try again.",
  not_found: "That no longer exists. Reload the page to see what’s current.",
  method_not_allowed: "This page sent a request the server doesn’t accept. Reload the page and try again.",
  invalid_client_data: "Your browser sent an answer this site can’t read. Please try again.",
  // A field with a value the endpoint does not accept
  invalid_username: "Choose a username of up to 64 characters, without spaces.",
  invalid_display_name: "Enter a name of 1 to 64 characters.",
  // The server's sentence names the configured length limits.
  invalid_password: (serverMessage) => serverMessage || "Choose a password of at least 8 characters.",
  invalid_current_password: "Enter your current password to change it.",
  invalid_phone: "Enter your mobile number in international format, starting with +.",
  invalid_name: "Give the passkey a name of 1 to 64 characters.",
  invalid_kind: "That kind of passkey isn’t supported. Reload the page and try again.",
  invalid_mediation: "This browser can’t save a passkey that way. Reload the page and try again.",
  invalid_theme: "That icon isn’t available. Reload the page and try again.",
  invalid_credential_id: "That passkey no longer exists. Reload the page to see what’s current.",
  invalid_factor: "Choose how you want to confirm it’s you.",
  // Who is asking
  unauthenticated: "You’re signed out. Sign in again to continue.",
  csrf_check_failed: "Your session on this page expired. Reload the page and try again.",
  not_an_admin: "Only administrators can do this.",
  passkey_required: "Confirm it’s you with your passkey to open the console.",
  admin_scope_missing: "This admin token isn’t allowed to do that.",
  last_administrator: "That would leave nobody able to open the console. Make someone else an administrator first.",
  confirmation_mismatch: "The username you typed doesn’t match. Type it exactly to confirm.",
  origin_not_allowed: "This request came from a page this site doesn’t serve.",
  host_not_allowed: "This site doesn’t sign people in to that address.",
  invalid_credentials: "That username and password don’t match. Check them and try again.",
  wrong_password: "Your current password isn’t right.",
  account_disabled: "This account is turned off. Contact the site’s administrator.",
  reauthentication_required: "For your security, confirm it’s you with your passkey (or sign out and in again), then make this change.",
  session_limited: "You signed in with a code from your email: add a passkey or security key first, then sign in with it.",
  second_factor_required: "Enter a code to finish signing in.",
  too_many_attempts: (_, retryAfter) => `Too many tries. For your security, wait ${minutes(retryAfter)} and try again.`,
  // Ceremonies
  challenge_invalid: "That took too long or was already used. Please start again.",
  registration_failed: "Your new passkey couldn’t be checked, so it wasn’t saved. Please try again, or use another device.",
  authentication_failed: "Your passkey couldn’t be checked. Please try again, or sign in another way.",
  unknown_credential: "This passkey isn’t registered with this site any more. Choose another passkey or sign in another way.",
  username_taken: "That username is taken. Choose another one.",
  sign_up_closed: "This site isn’t taking new accounts. Ask the person who runs it for one.",
  invitation_required: "This site takes new accounts by invitation only. Open the link from your invitation.",
  invitation_invalid: "This invitation can’t be used: it may have been used, withdrawn or have expired. Ask for a new one.",
  credential_exists: "This device already has a passkey for your account.",
  // Ways in and second factors
  invalid_code: "That code isn’t right, or it was already used. Check it and try again.",
  factor_not_enabled: "That way to confirm isn’t set up for this account. Choose another.",
  sms_not_enabled: "This account has no confirmed phone number. Choose another way to confirm.",
  sms_not_sent: "We couldn’t send the text message just now. Try again in a few minutes, or choose another way.",
  totp_already_enabled: "An authenticator app is already set up. Turn it off first to move to a new one.",
  no_pending_totp: "Start the authenticator app setup again, then enter the code.",
  no_passkey: "This account has no passkey yet. Confirm it’s you with your password instead.",
  no_password: "This account has no password. Confirm it’s you with your passkey instead.",
  // Email addresses
  email_not_enabled: "This site doesn’t keep email addresses.",
  invalid_email: "Enter an email address like name@example.org.",
  email_unchanged: "That’s your email address already.",
  email_required: "This site needs an email address. Change it instead of removing it.",
  invalid_email_code: "That code or link isn’t right, has expired or was already used. Ask for a new one and try again.",
  email_recovery_not_enabled: "This site doesn’t send sign-in codes by email.",
  invalid_recovery_code: "That code isn’t right, has expired or was already used. Ask for a new one and try again.",
  invalid_recovery_link: "This recovery link isn’t right, has expired or was already used. Ask your administrator for a new one.",
  recovery_link_no_address: "This account has no confirmed email address. Show the link and hand it over instead.",
  last_way_in: "You can’t remove this: it’s your last way to sign in. Add a passkey or password first.",
  // Groups (the admin API)
  invalid_group_slug: "A group’s short name uses a–z, 0–9 and -, starting with a letter.",
  invalid_group_name: "Give the group a name of 1 to 64 characters.",
  invalid_group_claims: "Custom claims must be a small JSON object that doesn’t use a name Sesame gives itself.",
  group_not_found: "There’s no group with that name.",
  group_exists: "A group with that name exists already.",
  membership_unchanged: "Nothing changed: that account already was (or wasn’t) in the group.",
  account_not_found: "There’s no account with that name.",
  // Apps, invitations, forward auth and metadata (the admin API)
  invalid_app: "The app can’t be saved that way. Check its name, its URIs (https, without a fragment) and its groups.",
  app_not_found: "There’s no such app (or it has no secret to rotate).",
  invitation_refused: "The invitation can’t be made that way. Check the address, the groups and how long it lasts.",
  invitation_not_found: "There’s no usable invitation with that id.",
  invalid_forward_auth_test: "Give an https URL with a host name, and the username of an existing account (or none).",
  metadata_refused: "That metadata BLOB didn’t pass its checks, so nothing was stored.",
  // Keychain sync (sent to the keychain's devices; a page sees them only if it calls those endpoints)
  keychain_device_unknown: "This keychain device isn’t enrolled with your account any more. Enroll it again.",
  keychain_device_mismatch: "This device token belongs to another keychain device.",
  keychain_invalid_message: "The keychain sent something the server can’t accept. Update Sesame and try again.",
  keychain_version_conflict: "Your keychain changed on another device. Sync again.",
  keychain_wrong_vault: "Your account already syncs another keychain vault.",
  keychain_limit_reached: "Too many waiting join requests or shares. Finish or withdraw some first.",
  // Admin API tokens and the audit log (the admin API)
  invalid_admin_token_name: "Give the token a name of 1 to 64 characters.",
  invalid_admin_token_scope: "Choose at least one scope, from the ones listed.",
  invalid_admin_token_lifetime: "A token can last 1 to 365 days.",
  admin_token_not_found: "There’s no active token with that id.",
  admin_token_needs_person: "A token can’t make tokens. Make one in the console or with sesame admin-tokens create.",
  invalid_audit_filter: "One of the filters can’t be read. Check the dates and try again.",
  // The server
  internal_error: "Something went wrong on our side. Please try again.",
  unavailable: "The service is unavailable right now. Please try again in a moment.",
  storage_full: "The service can’t save changes right now. Please try again later.",
};

/** The sentence shown for an API error code. */
export function humanMessage(code, serverMessage, retryAfter) {
  const entry = Object.hasOwn(messages, code) ? messages[code] : undefined;
  if (typeof entry === "function") return entry(serverMessage, retryAfter);
  if (typeof entry === "string") return entry;
  // A code this page does not know (a newer server): its own message is written for people too.
  if (typeof serverMessage === "string" && serverMessage.length > 0 && serverMessage.length < 200) return serverMessage;
  return "Something went wrong. Please try again.";
}

/**
 * `method path` with an optional JSON body; resolves to the parsed JSON answer, rejects with APIFailure.
 * A sensitive change that answers `reauthentication_required` asks for the account's passkey once
 * (`/api/session/reauthenticate`) and is then sent again; if that is cancelled or fails, the original
 * failure is what the page shows.
 */
export async function call(method, path, body) {
  try {
    return await send(method, path, body);
  } catch (failure) {
    if (!(failure instanceof APIFailure) || failure.code !== "reauthentication_required") throw failure;
    if (!(await reauthenticateWithPasskey())) throw failure;
    return send(method, path, body);
  }
}

/** Proves the signed-in user is still here with one of the account's passkeys; false if that didn't happen. */
async function reauthenticateWithPasskey() {
  if (!window.PublicKeyCredential || !navigator.credentials) return false;
  try {
    const options = await send("POST", "/api/session/reauthenticate/options", {});
    const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
    if (!credential) return false;
    await send("POST", "/api/session/reauthenticate", { credential: credentialJSON(credential) });
    return true;
  } catch {
    return false;
  }
}

async function send(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && method !== "HEAD" && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    throw new APIFailure(0, "network", "Can’t reach the server. Check your connection and try again.");
  }
  let data = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const retry = Number.parseInt(response.headers.get("Retry-After") || "", 10);
    const code = data && typeof data.error === "string" ? data.error : `http_${response.status}`;
    throw new APIFailure(response.status, code, data && data.message, Number.isFinite(retry) ? retry : undefined, data);
  }
  return data;
}

/** Every endpoint the pages use, in one place. */
export const api = {
  registrationOptions: (username, displayName, invitation, email) => {
    const body = { username, displayName };
    if (invitation) body.invitation = invitation;
    if (email) body.email = email;
    return call("POST", "/api/registration/options", body);
  },
  registrationPolicy: () => call("GET", "/api/registration/policy"),
  register: (payload) => call("POST", "/api/registration", payload),
  authenticationOptions: (username) =>
    call("POST", "/api/authentication/options", username ? { username } : {}),
  authenticate: (payload) => call("POST", "/api/authentication", payload),
  passwordSignIn: (username, password) => call("POST", "/api/sessions/password", { username, password }),
  sendSMSCode: (pendingToken) => call("POST", "/api/sessions/second-factor/sms", pendingToken ? { pendingToken } : {}),
  secondFactor: (factor, code, pendingToken) =>
    call("POST", "/api/sessions/second-factor", pendingToken ? { factor, code, pendingToken } : { factor, code }),

  account: () => call("GET", "/api/account"),
  renameAccount: (displayName) => call("PATCH", "/api/account", { displayName }),
  passkeys: () => call("GET", "/api/account/passkeys"),
  passkeyOptions: (kind, mediation) =>
    call("POST", "/api/account/passkeys/options", { ...(kind ? { kind } : {}), ...(mediation ? { mediation } : {}) }),
  addPasskey: (payload) => call("POST", "/api/account/passkeys", payload),
  renamePasskey: (id, name) => call("PATCH", `/api/account/passkeys/${encodeURIComponent(id)}`, { name }),
  deletePasskey: (id) => call("DELETE", `/api/account/passkeys/${encodeURIComponent(id)}`),
  signals: () => call("GET", "/api/account/signals"),

  setPassword: (currentPassword, newPassword) =>
    call("PUT", "/api/account/password", currentPassword ? { currentPassword, newPassword } : { newPassword }),
  removePassword: () => call("DELETE", "/api/account/password"),

  totpStart: () => call("POST", "/api/account/totp", {}),
  totpConfirm: (code) => call("POST", "/api/account/totp/confirm", { code }),
  totpDisable: () => call("DELETE", "/api/account/totp"),

  recoveryCodes: () => call("POST", "/api/account/recovery-codes", {}),

  emailShow: () => call("GET", "/api/account/email"),
  emailStart: (address) => call("PUT", "/api/account/email", { address }),
  emailConfirm: (code) => call("POST", "/api/account/email/confirm", { code }),
  emailRemove: () => call("DELETE", "/api/account/email"),
  emailVerify: (token) => call("POST", "/api/email/verify", { token }),
  smsStart: (phone) => call("PUT", "/api/account/sms", { phone }),
  smsConfirm: (code) => call("POST", "/api/account/sms/confirm", { code }),
  smsRemove: () => call("DELETE", "/api/account/sms"),

  apps: () => call("GET", "/api/account/apps"),
  revokeApp: (clientId) => call("DELETE", `/api/account/apps/${encodeURIComponent(clientId)}`),
  sessions: () => call("GET", "/api/account/sessions"),
  revokeSession: (id) => call("DELETE", `/api/account/sessions/${encodeURIComponent(id)}`),
  revokeAllSessions: () => call("DELETE", "/api/account/sessions"),
  signOut: () => call("DELETE", "/api/session"),

  recoveryAsk: (identifier) => call("POST", "/api/recovery/email", { identifier }),
  recoveryVerify: (recoveryToken, code) => call("POST", "/api/recovery/email/verify", { recoveryToken, code }),
  recoveryLink: (token) => call("POST", "/api/recovery/link", { token }),
};
