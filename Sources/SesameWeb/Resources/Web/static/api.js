// Talking to the Sesame API: JSON in and out, the CSRF header on writes once signed in, and one human sentence
// (from the catalog, in the page's language) for every error code the API can answer with.

import { credentialJSON, requestOptions } from "./webauthn.js";
import { t, tn, formatNumber } from "./i18n.js";

let csrfToken = null;

/** Remember the CSRF token a sign-in or `GET /api/account` returned; it goes with every write. */
export function setCSRFToken(token) {
  csrfToken = typeof token === "string" && token.length > 0 ? token : null;
}

/** An API failure: `code` is the API's error code, `status` the HTTP status. `message` is for people. */
export class APIFailure extends Error {
  constructor(status, code, serverMessage, retryAfter, data) {
    super(humanMessage(code, serverMessage, retryAfter, data));
    this.name = "APIFailure";
    this.data = data && typeof data === "object" ? data : {};
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Whole minutes to wait, at least 1, from Retry-After seconds. */
function minutes(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 60) return 1;
  return Math.ceil(seconds / 60);
}

// Every code in the server's `APIErrorCode` has its sentence in the catalog as `error.<code>` (a test holds the
// catalog to the server's codes); the page gets them with its messages. Two are built from the answer:
// `too_many_attempts` counts the minutes of Retry-After, `invalid_password` names the length limits the server
// sends with it (`minimum`, `maximum`), or says it without numbers.
const builders = {
  too_many_attempts: (retryAfter) => tn("error.too_many_attempts", minutes(retryAfter)),
  invalid_password: (retryAfter, data) => {
    const minimum = Number.parseInt(data && data.minimum, 10);
    const maximum = Number.parseInt(data && data.maximum, 10);
    if (Number.isFinite(minimum) && Number.isFinite(maximum)) {
      return t("web.common.password-limits", { minimum: formatNumber(minimum), maximum: formatNumber(maximum) });
    }
    return t("error.invalid_password");
  },
};

/** The sentence shown for an API error code, in the page's language. */
export function humanMessage(code, serverMessage, retryAfter, data) {
  if (Object.hasOwn(builders, code)) return builders[code](retryAfter, data);
  const key = `error.${code}`;
  const sentence = t(`error.${code}`);
  if (sentence !== key) return sentence;
  // A code this page does not know (a newer server): its own message is written for people too (in English).
  if (typeof serverMessage === "string" && serverMessage.length > 0 && serverMessage.length < 200) return serverMessage;
  return t("web.common.generic-failure");
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

/**
 * `method path` on this origin with an optional JSON body and these extra headers, never cached: the answer and its
 * JSON (null when it has none). Rejects only when the request cannot be made. The pages' calls (`call`) and the
 * console's (`SesameConsole`'s `console.js`) both go through it and differ only in headers and errors.
 */
export async function exchange(method, path, body, extraHeaders = {}) {
  const headers = { Accept: "application/json", ...extraHeaders };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  let data = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  return { response, data };
}

async function send(method, path, body) {
  const headers = {};
  if (method !== "GET" && method !== "HEAD" && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let answer;
  try {
    answer = await exchange(method, path, body, headers);
  } catch {
    throw new APIFailure(0, "network", t("web.common.network"));
  }
  const { response, data } = answer;
  if (!response.ok) {
    const retry = Number.parseInt(response.headers.get("Retry-After") || "", 10);
    const code = data && typeof data.error === "string" ? data.error : `http_${response.status}`;
    throw new APIFailure(response.status, code, data && data.message, Number.isFinite(retry) ? retry : undefined, data);
  }
  return data;
}

/**
 * The endpoints of this target's pages and of more than one account card. An account card keeps the endpoints only it
 * uses in its own script (its feature's target), calling them through `call`.
 */
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
  /** Asks for a second-step code to be sent; `path` is the factor's own route, from the sign-in page. */
  sendSecondFactorCode: (path, pendingToken) => call("POST", path, pendingToken ? { pendingToken } : {}),
  secondFactor: (factor, code, pendingToken) =>
    call("POST", "/api/sessions/second-factor", pendingToken ? { factor, code, pendingToken } : { factor, code }),

  account: () => call("GET", "/api/account"),
  passkeyOptions: (kind, mediation) =>
    call("POST", "/api/account/passkeys/options", { ...(kind ? { kind } : {}), ...(mediation ? { mediation } : {}) }),
  addPasskey: (payload) => call("POST", "/api/account/passkeys", payload),
  signals: () => call("GET", "/api/account/signals"),

  setPassword: (currentPassword, newPassword) =>
    call("PUT", "/api/account/password", currentPassword ? { currentPassword, newPassword } : { newPassword }),

  emailVerify: (token) => call("POST", "/api/email/verify", { token }),

  signOut: () => call("DELETE", "/api/session"),

  recoveryAsk: (identifier) => call("POST", "/api/recovery/email", { identifier }),
  recoveryVerify: (recoveryToken, code) => call("POST", "/api/recovery/email/verify", { recoveryToken, code }),
  recoveryLink: (token) => call("POST", "/api/recovery/link", { token }),
};
