// Sesame Keychain: the page's side (content script in the MAIN world, run at document_start before any page
// script). It answers navigator.credentials.create/get for `publicKey` requests and the PublicKeyCredential statics
// with objects built on the browser's own prototypes, so a page sees what it would see from the browser itself.
//
// What this script never does: decide anything. It turns the page's options into WebAuthn JSON, hands them to the
// isolated-world relay (relay.js) with window.postMessage, and turns the relay's answer back into a credential or a
// DOMException. The origin is not sent from here: the service worker takes it from the browser (sender.origin).
// Which passkeys exist is never posted here either; only the one the person picked comes back.
(() => {
  "use strict";
  if (typeof window.PublicKeyCredential !== "function" || !window.navigator.credentials) return;

  const PAGE = "sesame-keychain/page";
  const RELAY = "sesame-keychain/relay";

  // Everything used later is captured now, before page scripts can replace it.
  const Container = window.CredentialsContainer.prototype;
  const PKC = window.PublicKeyCredential;
  const Credential = window.Credential;
  const AttestationResponse = window.AuthenticatorAttestationResponse;
  const AssertionResponse = window.AuthenticatorAssertionResponse;
  const Response = window.AuthenticatorResponse;
  const nativeGet = Container.get;
  const nativeCreate = Container.create;
  const nativeStatics = {};
  for (const name of ["getClientCapabilities", "isConditionalMediationAvailable",
                      "isUserVerifyingPlatformAuthenticatorAvailable"]) {
    if (typeof PKC[name] === "function") nativeStatics[name] = PKC[name];
  }
  const post = window.postMessage.bind(window);
  const addListener = window.addEventListener.bind(window);
  const NativeDOMException = window.DOMException;
  const NativeTypeError = window.TypeError;
  const NativePromise = window.Promise;
  const WeakMapGet = WeakMap.prototype.get;
  const WeakMapHas = WeakMap.prototype.has;
  const WeakMapSet = WeakMap.prototype.set;
  const fromCharCode = String.fromCharCode;
  const btoa = window.btoa.bind(window);
  const atob = window.atob.bind(window);

  // --- Looking native -------------------------------------------------------------------------------------------
  // Our replacements print as native functions, keep the property attributes of what they replace, and have no
  // `prototype` (method shorthand), like the browser's own.
  // The browser's own wording is read from one of its functions: Chromium prints `{ [native code] }` on one line,
  // Firefox over three.
  const disguised = new WeakMap();
  const nativeToString = Function.prototype.toString;
  const [nativeBefore, nativeAfter] = nativeToString.call(nativeToString).split("toString");
  const toString = {
    toString() {
      if (WeakMapHas.call(disguised, this)) return nativeBefore + WeakMapGet.call(disguised, this) + nativeAfter;
      return nativeToString.call(this);
    },
  }.toString;
  WeakMapSet.call(disguised, toString, "toString");
  Object.defineProperty(Function.prototype, "toString", { value: toString });

  function replaceMethod(target, name, fn) {
    const descriptor = Object.getOwnPropertyDescriptor(target, name);
    if (descriptor) Object.defineProperty(target, name, { ...descriptor, value: fn });
    else Object.defineProperty(target, name, { value: fn, writable: true, enumerable: true, configurable: true });
    Object.defineProperty(fn, "name", { value: name });
    WeakMapSet.call(disguised, fn, name);
  }

  // Getters keep answering for the browser's own objects; ours (in `slots`) answer from their slot.
  const slots = new WeakMap();
  function replaceGetter(target, name, read) {
    const descriptor = Object.getOwnPropertyDescriptor(target, name);
    const original = descriptor && descriptor.get;
    const getter = Object.getOwnPropertyDescriptor({
      get [name]() {
        if (WeakMapHas.call(slots, this)) return read(WeakMapGet.call(slots, this));
        if (original) return original.call(this);
        throw new NativeTypeError("Illegal invocation");  // i18n-ignore
      },
    }, name).get;
    Object.defineProperty(getter, "name", { value: `get ${name}` });
    WeakMapSet.call(disguised, getter, `get ${name}`);
    Object.defineProperty(target, name, { get: getter, set: undefined, enumerable: true, configurable: true });
  }
  function replaceSlotMethod(target, name, call) {
    const original = target[name];
    const fn = {
      [name](...args) {
        if (WeakMapHas.call(slots, this)) return call(WeakMapGet.call(slots, this), args);
        if (typeof original === "function") return original.apply(this, args);
        throw new NativeTypeError("Illegal invocation");  // i18n-ignore
      },
    }[name];
    replaceMethod(target, name, fn);
  }

  // --- Bytes and JSON -------------------------------------------------------------------------------------------
  function bytesOf(source, what) {
    if (source instanceof ArrayBuffer) return new Uint8Array(source);
    if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    throw new NativeTypeError(`Failed to read the '${what}' property: not an ArrayBuffer or ArrayBufferView.`);  // i18n-ignore
  }
  function b64url(source, what) {
    const bytes = bytesOf(source, what);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function buffer(text) {
    const binary = atob(String(text).replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }
  function defined(object) {
    const out = {};
    for (const key of Object.keys(object)) if (object[key] !== undefined) out[key] = object[key];
    return out;
  }
  function descriptors(list, what) {
    if (list === undefined || list === null) return undefined;
    return Array.from(list, (d) => defined({ type: String(d.type), id: b64url(d.id, `${what}.id`),
                                             transports: d.transports ? Array.from(d.transports, String) : undefined }));
  }
  // Only extensions the keychain answers are passed on; a browser ignores the ones it does not know too.
  // prf (WebAuthn L3 §10.1.4): its salts go as base64url; the keychain checks evalByCredential against
  // allowCredentials and refuses as a browser does (NotSupportedError, SyntaxError).
  function prfValues(values, what) {
    if (values === undefined || values === null) return undefined;
    return defined({
      first: b64url(required(values.first, `${what}.first`), `${what}.first`),
      second: values.second === undefined ? undefined : b64url(values.second, `${what}.second`),
    });
  }
  function extensions(ext) {
    if (!ext || typeof ext !== "object") return undefined;
    const out = {};
    if (ext.credProps === true) out.credProps = true;
    if (ext.prf !== undefined && ext.prf !== null) {
      const prf = ext.prf;
      let byCredential;
      if (prf.evalByCredential !== undefined && prf.evalByCredential !== null) {
        byCredential = {};
        for (const key of Object.keys(prf.evalByCredential)) {
          byCredential[String(key)] = prfValues(prf.evalByCredential[key], `prf.evalByCredential.${key}`);
        }
      }
      out.prf = defined({ eval: prfValues(prf.eval, "prf.eval"), evalByCredential: byCredential });
    }
    // largeBlob (WebAuthn L3 §10.1.5): the keychain checks which members the ceremony allows.
    if (ext.largeBlob !== undefined && ext.largeBlob !== null) {
      const blob = ext.largeBlob;
      out.largeBlob = defined({
        support: blob.support === undefined ? undefined : String(blob.support),
        read: blob.read === undefined ? undefined : Boolean(blob.read),
        write: blob.write === undefined ? undefined : b64url(blob.write, "largeBlob.write"),
      });
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  // getClientExtensionResults(): a fresh copy each call, with the PRF's values and a large blob as ArrayBuffers, as
  // a browser gives them (toJSON keeps them base64url).
  function extensionResults(json) {
    const out = JSON.parse(JSON.stringify(json || {}));
    if (out.prf && out.prf.results) {
      const r = out.prf.results;
      out.prf.results = defined({ first: buffer(r.first), second: r.second === undefined ? undefined : buffer(r.second) });
    }
    if (out.largeBlob && out.largeBlob.blob !== undefined) out.largeBlob.blob = buffer(out.largeBlob.blob);
    return out;
  }
  function required(value, what) {
    if (value === undefined || value === null) {
      throw new NativeTypeError(`Failed to read the '${what}' property: required member is undefined.`);  // i18n-ignore
    }
    return value;
  }

  // PublicKeyCredentialCreationOptions -> PublicKeyCredentialCreationOptionsJSON (WebAuthn L3 §5.1.8).
  function creationJSON(pk) {
    const rp = required(pk.rp, "rp");
    const user = required(pk.user, "user");
    return defined({
      rp: defined({ id: rp.id === undefined ? undefined : String(rp.id), name: String(required(rp.name, "rp.name")) }),
      user: { id: b64url(required(user.id, "user.id"), "user.id"), name: String(required(user.name, "user.name")),
              displayName: String(required(user.displayName, "user.displayName")) },
      challenge: b64url(required(pk.challenge, "challenge"), "challenge"),
      pubKeyCredParams: Array.from(required(pk.pubKeyCredParams, "pubKeyCredParams"),
                                   (p) => ({ type: String(p.type), alg: Number(p.alg) })),
      timeout: pk.timeout === undefined ? undefined : Number(pk.timeout),
      excludeCredentials: descriptors(pk.excludeCredentials, "excludeCredentials"),
      authenticatorSelection: pk.authenticatorSelection ? defined({
        authenticatorAttachment: pk.authenticatorSelection.authenticatorAttachment,
        residentKey: pk.authenticatorSelection.residentKey,
        requireResidentKey: pk.authenticatorSelection.requireResidentKey,
        userVerification: pk.authenticatorSelection.userVerification,
      }) : undefined,
      hints: pk.hints ? Array.from(pk.hints, String) : undefined,
      attestation: pk.attestation === undefined ? undefined : String(pk.attestation),
      extensions: extensions(pk.extensions),
    });
  }

  // PublicKeyCredentialRequestOptions -> PublicKeyCredentialRequestOptionsJSON (WebAuthn L3 §5.1.9).
  function requestJSON(pk) {
    return defined({
      challenge: b64url(required(pk.challenge, "challenge"), "challenge"),
      timeout: pk.timeout === undefined ? undefined : Number(pk.timeout),
      rpId: pk.rpId === undefined ? undefined : String(pk.rpId),
      allowCredentials: descriptors(pk.allowCredentials, "allowCredentials"),
      userVerification: pk.userVerification === undefined ? undefined : String(pk.userVerification),
      hints: pk.hints ? Array.from(pk.hints, String) : undefined,
      extensions: extensions(pk.extensions),
    });
  }

  // --- Credentials built on the browser's prototypes -------------------------------------------------------------
  function makeCredential(json, ceremony) {
    const r = json.response || {};
    const response = Object.create((ceremony === "create" ? AttestationResponse : AssertionResponse).prototype);
    const responseSlot = {
      clientDataJSON: buffer(r.clientDataJSON),
      json: r,
    };
    if (ceremony === "create") {
      responseSlot.attestationObject = buffer(r.attestationObject);
      responseSlot.authenticatorData = buffer(r.authenticatorData);
      responseSlot.publicKey = r.publicKey ? buffer(r.publicKey) : null;
      responseSlot.publicKeyAlgorithm = Number(r.publicKeyAlgorithm);
      responseSlot.transports = Array.from(r.transports || [], String);
    } else {
      responseSlot.authenticatorData = buffer(r.authenticatorData);
      responseSlot.signature = buffer(r.signature);
      responseSlot.userHandle = r.userHandle ? buffer(r.userHandle) : null;
    }
    WeakMapSet.call(slots, response, responseSlot);
    const credential = Object.create(PKC.prototype);
    WeakMapSet.call(slots, credential, {
      id: String(json.id),
      rawId: buffer(json.rawId),
      type: "public-key",
      authenticatorAttachment: json.authenticatorAttachment || null,
      clientExtensionResults: json.clientExtensionResults || {},
      response,
      ceremony,
    });
    return credential;
  }

  replaceGetter(Credential.prototype, "id", (s) => s.id);
  replaceGetter(Credential.prototype, "type", (s) => s.type);
  replaceGetter(PKC.prototype, "rawId", (s) => s.rawId);
  replaceGetter(PKC.prototype, "response", (s) => s.response);
  replaceGetter(PKC.prototype, "authenticatorAttachment", (s) => s.authenticatorAttachment);
  replaceSlotMethod(PKC.prototype, "getClientExtensionResults", (s) => extensionResults(s.clientExtensionResults));
  replaceSlotMethod(PKC.prototype, "toJSON", (s) => {
    const r = WeakMapGet.call(slots, s.response);
    const response = s.ceremony === "create"
      ? defined({ clientDataJSON: r.json.clientDataJSON, authenticatorData: r.json.authenticatorData,
                  transports: r.transports.slice(), publicKey: r.json.publicKey,
                  publicKeyAlgorithm: r.publicKeyAlgorithm, attestationObject: r.json.attestationObject })
      : defined({ clientDataJSON: r.json.clientDataJSON, authenticatorData: r.json.authenticatorData,
                  signature: r.json.signature, userHandle: r.json.userHandle || undefined });
    return defined({ id: s.id, rawId: s.id, response,
                     authenticatorAttachment: s.authenticatorAttachment || undefined,
                     clientExtensionResults: JSON.parse(JSON.stringify(s.clientExtensionResults)),
                     type: s.type });
  });
  replaceGetter(Response.prototype, "clientDataJSON", (s) => s.clientDataJSON);
  replaceGetter(AttestationResponse.prototype, "attestationObject", (s) => s.attestationObject);
  replaceSlotMethod(AttestationResponse.prototype, "getTransports", (s) => s.transports.slice());
  replaceSlotMethod(AttestationResponse.prototype, "getAuthenticatorData", (s) => s.authenticatorData);
  replaceSlotMethod(AttestationResponse.prototype, "getPublicKey", (s) => s.publicKey);
  replaceSlotMethod(AttestationResponse.prototype, "getPublicKeyAlgorithm", (s) => s.publicKeyAlgorithm);
  replaceGetter(AssertionResponse.prototype, "authenticatorData", (s) => s.authenticatorData);
  replaceGetter(AssertionResponse.prototype, "signature", (s) => s.signature);
  replaceGetter(AssertionResponse.prototype, "userHandle", (s) => s.userHandle);

  // --- The relay ------------------------------------------------------------------------------------------------
  const waiting = new Map();
  let counter = 0;
  addListener("message", (event) => {
    if (event.source !== window || !event.data || event.data.source !== RELAY) return;
    const answer = waiting.get(event.data.id);
    if (!answer) return;
    waiting.delete(event.data.id);
    answer(event.data);
  });
  function ask(message, signal) {
    return new NativePromise((resolve) => {
      counter += 1;
      const id = `${counter}-${Math.random().toString(36).slice(2)}`;
      waiting.set(id, resolve);
      if (signal) {
        signal.addEventListener("abort", () => {
          if (!waiting.has(id)) return;
          waiting.delete(id);
          post({ source: PAGE, id, kind: "cancel" }, window.location.origin);
          resolve({ aborted: true });
        }, { once: true });
      }
      post({ source: PAGE, id, ...message }, window.location.origin);
    });
  }
  function failure(error) {
    const name = (error && error.name) || "NotAllowedError";
    const text = (error && error.message) || "The operation either timed out or was not allowed.";  // i18n-ignore
    if (name === "TypeError") return new NativeTypeError(text);
    return new NativeDOMException(text, name);
  }
  function abortReason(signal) {
    return signal.reason !== undefined ? signal.reason : new NativeDOMException("signal is aborted without reason", "AbortError");
  }

  async function ceremony(kind, options, container) {
    const signal = options.signal;
    if (signal && signal.aborted) throw abortReason(signal);
    const pk = options.publicKey;
    const json = kind === "create" ? creationJSON(pk) : requestJSON(pk);
    const mediation = options.mediation === undefined ? "optional" : String(options.mediation);
    const answer = await ask({ kind, options: json, mediation }, signal);
    if (answer.aborted) throw abortReason(signal);
    if (answer.handBack) {
      // "Another device or security key": the browser's own WebAuthn takes the request as the page made it.
      return (kind === "create" ? nativeCreate : nativeGet).call(container, options);
    }
    if (answer.error) throw failure(answer.error);
    return makeCredential(answer.credential, kind);
  }

  replaceMethod(Container, "create", {
    create(options) {
      if (!options || typeof options !== "object" || !options.publicKey) return nativeCreate.apply(this, arguments);
      return ceremony("create", options, this);
    },
  }.create);
  replaceMethod(Container, "get", {
    get(options) {
      if (!options || typeof options !== "object" || !options.publicKey) return nativeGet.apply(this, arguments);
      return ceremony("get", options, this);
    },
  }.get);

  // --- Statics --------------------------------------------------------------------------------------------------
  replaceMethod(PKC, "isConditionalMediationAvailable", {
    isConditionalMediationAvailable() { return NativePromise.resolve(true); },
  }.isConditionalMediationAvailable);
  replaceMethod(PKC, "isUserVerifyingPlatformAuthenticatorAvailable", {
    isUserVerifyingPlatformAuthenticatorAvailable() { return NativePromise.resolve(true); },
  }.isUserVerifyingPlatformAuthenticatorAvailable);
  replaceMethod(PKC, "getClientCapabilities", {
    async getClientCapabilities() {
      let caps = {};
      if (nativeStatics.getClientCapabilities) {
        try { caps = await nativeStatics.getClientCapabilities.call(PKC); } catch { caps = {}; }
      }
      // What the keychain answers; the browser's own answer stays for the rest (hybrid transport, related
      // origins). Extensions other than credProps, prf and largeBlob are dropped before the keychain sees a request,
      // so say so.
      caps = { ...caps };
      for (const key of Object.keys(caps)) if (key.startsWith("extension:")) caps[key] = false;
      return { ...caps, conditionalGet: true, conditionalCreate: true, immediateGet: true,
               passkeyPlatformAuthenticator: true, userVerifyingPlatformAuthenticator: true,
               signalAllAcceptedCredentials: true, signalCurrentUserDetails: true, signalUnknownCredential: true,
               "extension:credProps": true, "extension:prf": true,
               "extension:largeBlob": true };
    },
  }.getClientCapabilities);

  // parseCreationOptionsFromJSON / parseRequestOptionsFromJSON: the browser's own where it has them (their results
  // are plain dictionaries the keychain reads like any other); the same conversion here where it does not.
  if (typeof PKC.parseCreationOptionsFromJSON !== "function") {
    replaceMethod(PKC, "parseCreationOptionsFromJSON", {
      parseCreationOptionsFromJSON(json) {
        const d = (list) => list && list.map((x) => ({ ...x, id: buffer(x.id) }));
        return { ...json, challenge: buffer(json.challenge), user: { ...json.user, id: buffer(json.user.id) },
                 excludeCredentials: d(json.excludeCredentials) };
      },
    }.parseCreationOptionsFromJSON);
  }
  if (typeof PKC.parseRequestOptionsFromJSON !== "function") {
    replaceMethod(PKC, "parseRequestOptionsFromJSON", {
      parseRequestOptionsFromJSON(json) {
        const d = (list) => list && list.map((x) => ({ ...x, id: buffer(x.id) }));
        return { ...json, challenge: buffer(json.challenge), allowCredentials: d(json.allowCredentials) };
      },
    }.parseRequestOptionsFromJSON);
  }

  // Signal API (WebAuthn L3 §5.1.10): the keychain checks the RP ID against the real origin, as a browser does.
  function signal(name, members) {
    return async function (options) {
      if (!options || typeof options !== "object") throw new NativeTypeError(`Failed to execute '${name}'.`);  // i18n-ignore
      const payload = {};
      for (const member of members) payload[member] = required(options[member], member);
      const answer = await ask({ kind: "signal", signal: name, payload });
      if (answer.error) throw failure(answer.error);
      return undefined;
    };
  }
  const signals = {
    signalUnknownCredential: ["rpId", "credentialId"],
    signalAllAcceptedCredentials: ["rpId", "userId", "allAcceptedCredentialIds"],
    signalCurrentUserDetails: ["rpId", "userId", "name", "displayName"],
  };
  for (const [name, members] of Object.entries(signals)) {
    const run = signal(name, members);
    replaceMethod(PKC, name, { [name](options) { return run(options); } }[name]);
  }
})();
