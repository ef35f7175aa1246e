// What every console page shares: calls to the admin API with both CSRF tokens (sent through the pages' `exchange`,
// `/static/api.js`), the inline passkey check when the console's window has passed, and small DOM helpers that never
// parse HTML.

import { requestOptions, credentialJSON } from "/static/webauthn.js";
import { exchange } from "/static/api.js";
import { t, formatDateIn } from "/static/i18n.js";

// The DOM helper the account pages use: elements made without parsing HTML. The page's words (`t`, `tn`) and
// numbers come from `/static/i18n.js`, in the page's language.
export { el } from "/static/ui.js";
export { t, tn, formatNumber, formatDateIn } from "/static/i18n.js";

/** A day (`2026-11-29`) in the page's language, as the UTC date it names; the text itself if it is not one. */
export function formatDay(value) {
  return formatDateIn(value, { dateStyle: "medium", timeZone: "UTC" }) || String(value ?? "");
}

/** A date and time in the page's language; "never" for none. */
export function formatDate(value) {
  if (!value) return t("console.common.never");
  return formatDateIn(value) || t("console.common.unknown");
}

/** The sentence for an API error `code` in the page's language, else the server's `message`, else a general one. */
export function errorText(code, message) {
  if (code) {
    const key = `error.${code}`;
    const text = t(`error.${code}`);
    if (text !== key) return text;
  }
  return message || t("console.common.failed");
}

function meta(name) {
  const element = document.querySelector(`meta[name="${name}"]`);
  return element ? element.getAttribute("content") : "";
}

/** An admin API failure: `code` is the API's error code, `status` the HTTP status. */
export class AdminFailure extends Error {
  constructor(status, code, message, data) {
    super(errorText(code, message));
    this.name = "AdminFailure";
    this.status = status;
    this.code = code;
    this.data = data && typeof data === "object" ? data : {};
  }
}

async function send(method, path, body) {
  const headers = {};
  if (method !== "GET" && method !== "HEAD") {
    headers["X-CSRF-Token"] = meta("sesame-csrf");
    headers["X-Console-CSRF"] = meta("sesame-console-csrf");
  }
  let answer;
  try {
    answer = await exchange(method, path, body, headers);
  } catch {
    throw new AdminFailure(0, "network", t("console.common.offline"));
  }
  const { response, data } = answer;
  if (!response.ok) {
    throw new AdminFailure(response.status, data && data.error, data && data.message, data);
  }
  return data;
}

/** Proves the administrator is still here with a passkey (`/api/session/reauthenticate`); false if not. */
export async function confirmWithPasskey() {
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
 * `method path` on the admin API, resolving to the parsed JSON answer. When the console's window has passed
 * (`reauthentication_required`, `passkey_required`), the passkey is asked for once and the call sent again.
 */
export async function admin(method, path, body) {
  try {
    return await send(method, path, body);
  } catch (failure) {
    if (!(failure instanceof AdminFailure)) throw failure;
    if (failure.code !== "reauthentication_required" && failure.code !== "passkey_required") throw failure;
    if (!(await confirmWithPasskey())) throw failure;
    return send(method, path, body);
  }
}

/** Says something in the page's status line (`role=status`), or as an alert when it is an error. */
export function say(text, kind = "info") {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = text;
  status.dataset.kind = kind;
  status.setAttribute("role", kind === "error" ? "alert" : "status");
}
