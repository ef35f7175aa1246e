// Sesame Keychain: the service worker. It is the only part that talks to the native host
// (`sesame keychain native-host`, registered by `sesame keychain install-browser`), over one native-messaging port.
//
// The origin of every request is the one the browser gives for the sending frame (`sender.origin`); nothing the page
// or the content scripts say about their origin is read. Only top-level frames of tabs are served (the content
// scripts run nowhere else); a message from anything else is refused.
"use strict";

const HOST = "dev.sesame.keychain";
const KINDS = new Set([
  "prepare", "create", "get", "signal", "remove", "codes", "code", "passwords", "password", "savePassword",
]);

// What the worker must remember from one page to the next lives in chrome.storage.session: the browser stops an
// idle service worker whenever it likes (its memory goes with it), while session storage lasts until the browser
// quits, is never written to disk, and is out of the content scripts' reach (their access level is not granted).
// Each entry is read once and removed.
const remembered = {
  put(key, value) {
    return chrome.storage.session.set({ [key]: value });
  },
  async take(key) {
    const value = (await chrome.storage.session.get(key))[key];
    await chrome.storage.session.remove(key);
    return value;
  },
};

// A password typed into a sign-in form, offered for saving on the next page this tab loads from the same origin
// (sign-in forms usually navigate away), within a minute, once. Key "offer TAB": { origin, username, password, at }.
const OFFER_WINDOW_MS = 60 * 1000;

// Conditional create (the automatic passkey upgrade) is allowed once, within five minutes, for the origin where the
// person just picked a saved password from the keychain, and only for that password's user name.
// Key "upgrade ORIGIN": { username, at }.
const UPGRADE_WINDOW_MS = 5 * 60 * 1000;

let port = null;
let next = 1;
const pending = new Map();

function connect() {
  if (port) return port;
  port = chrome.runtime.connectNative(HOST);
  port.onMessage.addListener((message) => {
    const resolve = message && pending.get(message.id);
    if (!resolve) return;
    pending.delete(message.id);
    resolve(message);
  });
  port.onDisconnect.addListener(() => {
    // The host exited or could not start (not installed, wrong manifest): every open request fails the way a
    // browser reports an authenticator that went away.
    void chrome.runtime.lastError;
    port = null;
    for (const [id, resolve] of pending) {
      pending.delete(id);
      resolve({ id, ok: false, error: { name: "NotAllowedError", code: "hostUnavailable" } });
    }
  });
  return port;
}

function ask(request) {
  return new Promise((resolve) => {
    const id = next++;
    pending.set(id, resolve);
    try {
      connect().postMessage({ id, ...request });
    } catch {
      pending.delete(id);
      resolve({ id, ok: false, error: { name: "NotAllowedError", code: "hostUnavailable" } });
    }
  });
}

// The toolbar window (popup.html, also opened in a tab by the tests) reaches every item, so its requests are served
// only to that page of this extension: a content script's sender.url is its page's, never ours.
const WINDOW_KINDS = new Set([
  "status", "unlock", "lock", "items", "item", "itemCode", "updateItem", "deleteItem", "undoDelete",
  "exportCXF", "importCXF", "syncStatus", "syncNow", "approveDevice", "addPassword", "removeDevice",
  "addCode", "waitingDevices", "refuseDevice", "generatePassword", "importBitwarden", "importKeePassXC",
  "addCodeQR",
]);
const WINDOW_PAGE = chrome.runtime.getURL("popup.html");

function fromWindow(sender) {
  return sender.id === chrome.runtime.id && typeof sender.url === "string"
    && (sender.url === WINDOW_PAGE || sender.url.startsWith(WINDOW_PAGE + "?") || sender.url.startsWith(WINDOW_PAGE + "#"));
}

// The window's requests: the origin is the one the window read from the active tab ("" for none); the passphrase
// goes straight to the host and is not kept here.
function forwardWindow(message, sendResponse) {
  const request = { kind: message.kind, origin: typeof message.origin === "string" ? message.origin : "" };
  if (message.kind === "unlock") request.passphrase = String(message.passphrase || "");
  if (message.kind === "items" && typeof message.query === "string") request.query = message.query;
  if (["item", "itemCode", "updateItem", "deleteItem", "undoDelete"].includes(message.kind)
      && typeof message.itemId === "string") {
    request.itemId = message.itemId;
  }
  if (message.kind === "importCXF") request.document = message.document;
  if (message.kind === "importBitwarden" || message.kind === "importKeePassXC") {
    request.export = String(message.export || "");
  }
  if (message.kind === "removeDevice") request.deviceId = String(message.deviceId || "");
  if (message.kind === "refuseDevice") request.joinRequest = String(message.joinRequest || "");
  if (message.kind === "generatePassword") request.words = Number(message.words) || 0;
  if (message.kind === "addCode") {
    request.uri = String(message.uri || "");
    request.site = String(message.site || "");
  }
  if (message.kind === "addCodeQR") {
    request.image = String(message.image || "");
    request.site = String(message.site || "");
  }
  if (message.kind === "approveDevice") {
    request.pairingCode = String(message.pairingCode || "");
    request.deviceName = String(message.deviceName || "");
  }
  if (message.kind === "updateItem" || message.kind === "addPassword") {
    for (const member of ["site", "username", "password", "notes", "displayName"]) {
      if (typeof message[member] === "string") request[member] = message[member];
    }
  }
  ask(request).then((answer) => {
    sendResponse(answer.ok ? { result: answer.result } : { error: answer.error || { name: "NotAllowedError" } });
  });
}

// Clearing what the window copied: the window may be closed by then, so the worker keeps the time. Chromium's worker
// has no clipboard; an offscreen document (reason CLIPBOARD) writes the empty string there. Firefox's background
// page writes it itself.
//
// How long: the person's setting (the window's Settings), in extension storage (storage.local, key CLEAR_SETTING),
// one of CLEAR_CHOICES, 30 s when unset or not one of them. An alarm keeps the time across the worker's restarts,
// but Chromium fires an installed extension's alarms no sooner than 30 s: a shorter time is a timer in the worker
// (which lives at least 30 s after the copy's message), with the alarm at 30 s behind it in case the worker was
// stopped anyway.
const CLEAR_ALARM = "clear clipboard";
const CLEAR_SETTING = "clipboardClearSeconds";
const CLEAR_CHOICES = [10, 20, 30, 60, 120, 300];
const CLEAR_DEFAULT = 30;
let clearTimer = null;
chrome.alarms && chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== CLEAR_ALARM) return;
  await clearClipboard();
});

async function clearSeconds() {
  const stored = (await chrome.storage.local.get(CLEAR_SETTING))[CLEAR_SETTING];
  return CLEAR_CHOICES.includes(stored) ? stored : CLEAR_DEFAULT;
}

async function clearLater() {
  const seconds = await clearSeconds();
  if (clearTimer) clearTimeout(clearTimer);
  clearTimer = null;
  if (seconds < 30) {
    clearTimer = setTimeout(async () => {
      clearTimer = null;
      if (chrome.alarms) await chrome.alarms.clear(CLEAR_ALARM);
      await clearClipboard();
    }, seconds * 1000);
  }
  if (chrome.alarms) await chrome.alarms.create(CLEAR_ALARM, { when: Date.now() + Math.max(seconds, 30) * 1000 });
  else if (!clearTimer) clearTimer = setTimeout(clearClipboard, seconds * 1000);
  return seconds;
}

async function clearClipboard() {
  if (chrome.offscreen && chrome.offscreen.createDocument) {
    try {
      if (!(await chrome.offscreen.hasDocument())) {
        await chrome.offscreen.createDocument({ url: "offscreen.html", reasons: ["CLIPBOARD"],
                                                justification: "Clear a copied password after its time" });  // i18n-ignore
      }
      await chrome.runtime.sendMessage({ target: "offscreen", kind: "clearClipboard" });
    } catch { /* nothing more can be done */ }
    try { await chrome.offscreen.closeDocument(); } catch { /* already closed */ }
    return;
  }
  try { await navigator.clipboard.writeText(""); } catch { /* not allowed here */ }
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const refuse = (code) => sendResponse({ error: { name: "NotAllowedError", code } });
  if (message && message.target === "offscreen") return false; // for the offscreen document
  if (fromWindow(sender) && message && message.kind === "clearClipboardLater") {
    clearLater().then((seconds) => sendResponse({ result: { seconds } }));
    return true;
  }
  if (fromWindow(sender) && message && WINDOW_KINDS.has(message.kind)) {
    forwardWindow(message, sendResponse);
    return true;
  }
  if (sender.id !== chrome.runtime.id || !sender.tab || sender.frameId !== 0 || typeof sender.origin !== "string") {
    refuse("notATopLevelPage");
    return false;
  }
  if (message && message.kind === "passwordUsed") {
    remembered.put(`upgrade ${sender.origin}`, { username: String(message.username), at: Date.now() })
      .then(() => sendResponse({ result: {} }));
    return true;
  }
  if (message && message.kind === "offerSave") {
    const offer = typeof message.password === "string" && message.password !== ""
      ? { origin: sender.origin, username: String(message.username || ""), password: message.password, at: Date.now() }
      : null;
    (offer ? remembered.put(`offer ${sender.tab.id}`, offer) : Promise.resolve())
      .then(() => sendResponse({ result: {} }));
    return true;
  }
  if (message && message.kind === "pendingSave") {
    remembered.take(`offer ${sender.tab.id}`).then((offer) => {
      const fresh = offer && offer.origin === sender.origin && Date.now() - offer.at <= OFFER_WINDOW_MS;
      sendResponse({ result: fresh ? { username: offer.username, password: offer.password } : {} });
    });
    return true;
  }
  if (!message || !KINDS.has(message.kind)) {
    refuse("unknownRequest");
    return false;
  }
  if (message.kind === "create" && message.conditional === true) {
    remembered.take(`upgrade ${sender.origin}`).then((use) => {
      const user = message.options && message.options.user;
      if (!use || Date.now() - use.at > UPGRADE_WINDOW_MS || !user || user.name !== use.username) {
        refuse("notEligible");
      } else {
        forward(message, sender, sendResponse);
      }
    });
    return true;
  }
  forward(message, sender, sendResponse);
  return true; // answered asynchronously
});

// Passes a request on to the native host with only the members its kind needs; `origin` always comes from the
// browser.
function forward(message, sender, sendResponse) {
  const request = { kind: message.kind, origin: sender.origin };
  if (message.kind === "prepare") request.ceremony = message.ceremony === "create" ? "create" : "get";
  if (["prepare", "create", "get"].includes(message.kind)) request.options = message.options;
  if ((message.kind === "code" || message.kind === "password") && typeof message.itemId === "string") {
    request.itemId = message.itemId;
  }
  if ((message.kind === "get" || message.kind === "remove") && typeof message.credentialId === "string") {
    request.credentialId = message.credentialId;
  }
  // remove: only after the person confirmed, in the extension's prompt, a signalUnknownCredential for this RP ID
  // (which the host checks against the origin again).
  if (message.kind === "remove") request.rpId = message.rpId;
  if (message.kind === "savePassword") {
    request.username = String(message.username || "");
    request.password = String(message.password || "");
  }
  if (message.kind === "signal") {
    request.signal = message.signal;
    request.payload = message.payload;
  }
  ask(request).then((answer) => {
    sendResponse(answer.ok ? { result: answer.result } : { error: answer.error || { name: "NotAllowedError" } });
  });
}
