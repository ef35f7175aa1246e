// WebAuthn in the browser: options JSON from the server → navigator.credentials → credential JSON for the server,
// plus capability checks and the Signal API. Options arrive as WebAuthn Level 3 JSON (base64url binary fields);
// browsers that lack the JSON helpers get the same conversion done here.

import { t } from "./i18n.js";

function b64urlToBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function bytesToB64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The `publicKey` member whether the server wrapped it (`{publicKey: {...}}`) or not. */
export function publicKeyJSON(options) {
  if (options && typeof options === "object" && options.publicKey && typeof options.publicKey === "object") {
    return options.publicKey;
  }
  return options;
}

function descriptors(list) {
  return (list || []).map((d) => ({ ...d, id: b64urlToBytes(d.id) }));
}

export function creationOptions(json) {
  const pk = publicKeyJSON(json);
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function") {
    return PublicKeyCredential.parseCreationOptionsFromJSON(pk);
  }
  return {
    ...pk,
    challenge: b64urlToBytes(pk.challenge),
    user: { ...pk.user, id: b64urlToBytes(pk.user.id) },
    excludeCredentials: descriptors(pk.excludeCredentials),
  };
}

export function requestOptions(json) {
  const pk = publicKeyJSON(json);
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function") {
    return PublicKeyCredential.parseRequestOptionsFromJSON(pk);
  }
  return { ...pk, challenge: b64urlToBytes(pk.challenge), allowCredentials: descriptors(pk.allowCredentials) };
}

/** The credential as WebAuthn Level 3 JSON (`PublicKeyCredential.toJSON()` or the same shape built here). */
export function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: bytesToB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = bytesToB64url(r.attestationObject);
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
  } else {
    response.authenticatorData = bytesToB64url(r.authenticatorData);
    response.signature = bytesToB64url(r.signature);
    if (r.userHandle) response.userHandle = bytesToB64url(r.userHandle);
  }
  return {
    id: credential.id,
    rawId: bytesToB64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
    response,
  };
}

export function supported() {
  return typeof window.PublicKeyCredential === "function" && !!navigator.credentials;
}

/** `getClientCapabilities()` where the browser has it, else the older single checks; never rejects. */
export async function capabilities() {
  if (!supported()) return {};
  try {
    if (typeof PublicKeyCredential.getClientCapabilities === "function") {
      return await PublicKeyCredential.getClientCapabilities();
    }
  } catch {
    // fall through to the single checks
  }
  const caps = {};
  try {
    if (typeof PublicKeyCredential.isConditionalMediationAvailable === "function") {
      caps.conditionalGet = await PublicKeyCredential.isConditionalMediationAvailable();
    }
  } catch {
    caps.conditionalGet = false;
  }
  return caps;
}

/** What a rejected navigator.credentials call means for the person in front of the page. */
export function describeFailure(error) {
  const name = error && error.name;
  if (name === "NotAllowedError" || name === "AbortError") {
    return t("web.common.passkey-cancelled");
  }
  if (name === "InvalidStateError") return t("web.common.passkey-exists");
  if (name === "SecurityError") return t("web.common.passkey-wrong-address");
  if (name === "NotSupportedError") return t("web.common.passkey-unsuitable");
  if (name === "TypeError") return t("web.common.passkey-request-unsupported");
  return t("web.common.passkey-failed");
}

// Signal API: tell the credential manager what the server now holds. Each call is skipped where the browser
// lacks it, and never disturbs the page if it fails.

export async function signalUnknownCredential(rpId, credentialId) {
  if (typeof PublicKeyCredential?.signalUnknownCredential !== "function" || !rpId || !credentialId) return false;
  try {
    await PublicKeyCredential.signalUnknownCredential({ rpId, credentialId });
    return true;
  } catch {
    return false;
  }
}

export async function signalAllAcceptedCredentials(rpId, userId, allAcceptedCredentialIds) {
  if (typeof PublicKeyCredential?.signalAllAcceptedCredentials !== "function" || !rpId || !userId) return false;
  try {
    await PublicKeyCredential.signalAllAcceptedCredentials({ rpId, userId, allAcceptedCredentialIds });
    return true;
  } catch {
    return false;
  }
}

export async function signalCurrentUserDetails(rpId, userId, name, displayName) {
  if (typeof PublicKeyCredential?.signalCurrentUserDetails !== "function" || !rpId || !userId) return false;
  try {
    await PublicKeyCredential.signalCurrentUserDetails({ rpId, userId, name, displayName });
    return true;
  } catch {
    return false;
  }
}

/** The RP ID the server rendered into the page. */
export function pageRPID() {
  const meta = document.querySelector('meta[name="sesame-rp-id"]');
  return meta ? meta.content : location.hostname;
}
