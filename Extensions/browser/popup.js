// Sesame Keychain: the toolbar window (action popup). It talks to the native host through the service worker, which
// serves these requests only to this page. The passphrase typed here goes to the host once and is not kept; the
// host's unlock session (and its idle lock) is the only state.
//
// Opened as the action popup, "the current site" is the active tab's; opened in a tab (tests, or a person who
// prefers it), `popup.html?tab=ID` names the tab whose site comes first. The one thing it stores is a setting: how
// long a copied secret stays on the clipboard.
"use strict";

const $ = (id) => document.getElementById(id);
// The person's words, from _locales (made from the catalog's extension.* keys: `sesame catalog extension-locales`);
// a message's {placeholders} are passed in their names' alphabetical order, as the generator numbers them. The page's
// own words are named by data-i18n (text), data-i18n-placeholder and data-i18n-aria-label; English stays in the HTML
// where a message is missing.
const t = (key, values = {}) => chrome.i18n.getMessage(
  key.slice("extension.".length).replace(/[.-]/g, "_"),
  Object.keys(values).sort().map((name) => String(values[name])));
document.documentElement.lang = chrome.i18n.getUILanguage();
document.documentElement.dir = chrome.i18n.getMessage("@@bidi_dir") || "ltr";
for (const [attribute, apply] of [
  ["data-i18n", (node, text) => { node.textContent = text; }],
  ["data-i18n-placeholder", (node, text) => node.setAttribute("placeholder", text)],
  ["data-i18n-aria-label", (node, text) => node.setAttribute("aria-label", text)],
]) {
  for (const node of document.querySelectorAll(`[${attribute}]`)) {
    const text = t(node.getAttribute(attribute));
    if (text) apply(node, text);
  }
}
// How long a copied secret stays on the clipboard: the Settings choice, kept in extension storage (storage.local;
// not a secret) and read by the worker, which clears the clipboard (worker.js, CLEAR_CHOICES).
const CLEAR_SETTING = "clipboardClearSeconds";
const CLEAR_DEFAULT = 30;

const state = {
  origin: "", tabId: null, item: null, password: null, shown: false, codeTimer: null, listSeq: 0, view: null,
  creating: false,
};

function send(message) {
  return new Promise((resolve) => {
    try {
      chrome.runtime.sendMessage(message, (answer) => {
        void chrome.runtime.lastError;
        resolve(answer || { error: { name: "NotAllowedError", code: "hostUnavailable" } });
      });
    } catch {
      resolve({ error: { name: "NotAllowedError", code: "hostUnavailable" } });
    }
  });
}

let undoTimer = null;
function say(text, undo) {
  $("status-text").textContent = text;
  if (undoTimer) clearTimeout(undoTimer);
  undoTimer = null;
  $("undo").hidden = !undo;
  if (undo) {
    $("undo").onclick = () => { $("undo").hidden = true; undo.run(); };
    undoTimer = setTimeout(() => { $("undo").hidden = true; }, undo.seconds * 1000);
  }
}

const MESSAGES = {
  wrongPassphrase: t("extension.popup.error-wrong-passphrase"),
  locked: t("extension.popup.error-locked"),
  hostUnavailable: t("extension.popup.error-host"),
  vaultNotFound: t("extension.popup.error-no-vault"),
  itemNotFound: t("extension.popup.error-item-gone"),
  pairingCodeMismatch: t("extension.popup.error-code-mismatch"),
};
function explain(error) {
  return MESSAGES[error && error.code] || t("extension.popup.error-other", { code: (error && error.code) || "unknown" });
}

// --- Which site ----------------------------------------------------------------------------------------------------

function originOf(url) {
  try {
    const u = new URL(url);
    const local = u.hostname === "localhost" || u.hostname.endsWith(".localhost");
    if (u.protocol === "https:" || (u.protocol === "http:" && local)) return u.origin;
  } catch { /* not a URL */ }
  return "";
}

async function currentOrigin() {
  const tabId = new URLSearchParams(location.search).get("tab");
  let tab;
  try {
    if (tabId !== null) tab = await chrome.tabs.get(Number(tabId));
    else [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  } catch { tab = undefined; }
  state.tabId = tab && typeof tab.id === "number" ? tab.id : null;
  return tab && tab.url ? originOf(tab.url) : "";
}

// --- Views ---------------------------------------------------------------------------------------------------------

function show(view) {
  state.view = view;
  for (const name of ["unlock", "list", "item", "edit"]) $(`${name}-view`).hidden = name !== view;
  $("lock").hidden = view === "unlock";
  if (view !== "item" && view !== "edit") forgetItem();
  if (view !== "edit") $("edit-password").value = "";
}

function forgetItem() {
  if (state.codeTimer) clearInterval(state.codeTimer);
  state.codeTimer = null;
  state.item = null;
  state.password = null;
  state.shown = false;
  $("password-value").textContent = "••••••••";
  $("code-value").textContent = "";
}

function showUnlock(message) {
  show("unlock");
  $("unlock-error").textContent = message || "";
  $("passphrase").value = "";
  $("passphrase").focus();
}

async function start() {
  await loadSettings();
  state.origin = await currentOrigin();
  const answer = await send({ kind: "status" });
  if (answer.error) {
    showUnlock(answer.error.code === "locked" ? "" : explain(answer.error));
  } else if (answer.result.unlocked) {
    watchIdleLock(answer.result);
    await showList();
  } else {
    showUnlock();
  }
}

// The idle lock is the host's: the session ends once unused for its idle time, and a request after that is
// refused as locked. So that an open window does not go on showing what a locked vault holds, it asks for the
// session's state when the session would end (`expires`, which each use moves on) and shows the unlock form if it
// has ended. A status request is not a use.
let idleTimer = null;
function watchIdleLock(session) {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  if (!session || !session.unlocked || typeof session.expires !== "number") return;
  idleTimer = setTimeout(async () => {
    idleTimer = null;
    const answer = await send({ kind: "status" });
    if (answer.result && answer.result.unlocked) { watchIdleLock(answer.result); return; }
    if (state.view !== "unlock") {
      say("");
      showUnlock(t("extension.popup.idle-locked"));
    }
  }, Math.max(0, session.expires - Date.now()) + 250);
}

$("unlock-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const passphrase = $("passphrase").value;
  $("passphrase").value = "";
  if (!passphrase) return;
  $("unlock").disabled = true;
  $("unlock-error").textContent = "";
  say(t("extension.popup.unlocking"));
  const answer = await send({ kind: "unlock", passphrase });
  $("unlock").disabled = false;
  if (answer.error) {
    say("");
    showUnlock(explain(answer.error));
    return;
  }
  say(t("extension.popup.unlocked"));
  watchIdleLock(answer.result);
  await showList();
});

$("lock").addEventListener("click", async () => {
  const answer = await send({ kind: "lock" });
  if (answer.error) { say(explain(answer.error)); return; }
  say(t("extension.popup.locked-status"));
  watchIdleLock(null);
  showUnlock();
});

// --- The list ------------------------------------------------------------------------------------------------------

const KIND_NAMES = {
  passkey: t("extension.popup.kind-passkey"), password: t("extension.popup.kind-password"),
  code: t("extension.popup.kind-code"),
};

function itemButton(item) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.itemId = item.itemId;
  const title = document.createElement("span");
  title.textContent = item.sites.length ? item.sites.join(", ") : item.title;
  const kind = document.createElement("span");
  kind.className = "kind";
  kind.textContent = KIND_NAMES[item.kind] || item.kind;
  const sub = document.createElement("span");
  sub.className = "sub";
  sub.textContent = item.kind === "passkey"
    ? t("extension.popup.created-on", { user: item.username || "—", date: date(item.created) }) : (item.username || "—");
  button.append(title, kind, sub);
  button.setAttribute("aria-label", `${KIND_NAMES[item.kind] || item.kind}: ${title.textContent}, ${sub.textContent}`);
  button.addEventListener("click", () => openItem(item.itemId));
  li.append(button);
  return li;
}

async function showList() {
  show("list");
  await loadList();
  $("search").focus();
}

async function loadList() {
  const seq = ++state.listSeq;
  const query = $("search").value;
  let answer = await send({ kind: "items", origin: state.origin, query });
  if (answer.error && answer.error.code === "invalidOrigin" && state.origin) {
    state.origin = "";
    answer = await send({ kind: "items", origin: "", query });
  }
  if (seq !== state.listSeq) return; // a newer search answered first
  if (answer.error) {
    if (answer.error.code === "locked") showUnlock(explain(answer.error));
    else say(explain(answer.error));
    return;
  }
  const { items, site, more } = answer.result;
  const mine = items.filter((i) => i.forSite);
  const others = items.filter((i) => !i.forSite);
  $("site-heading").hidden = !site;
  $("site-heading").textContent = site ? t("extension.popup.this-site", { site }) : "";
  $("site-items").replaceChildren(...mine.map(itemButton));
  if (site && mine.length === 0 && !query) {
    const none = document.createElement("li");
    none.className = "hint";
    none.textContent = t("extension.popup.nothing-for-site");
    $("site-items").replaceChildren(none);
  }
  $("other-heading").textContent = query
    ? (site ? t("extension.popup.other-matches") : t("extension.popup.matches"))
    : (site ? t("extension.popup.other-items") : t("extension.popup.all-items"));
  $("other-heading").hidden = others.length === 0;
  $("other-items").replaceChildren(...others.map(itemButton));
  $("empty").hidden = items.length > 0;
  say(more ? t("extension.popup.first-200") : "");
}

$("search").addEventListener("input", () => { loadList(); });

function listButtons() {
  return [...document.querySelectorAll("#list-view .items button")];
}

$("list-view").addEventListener("keydown", (event) => {
  const buttons = listButtons();
  const at = buttons.indexOf(document.activeElement);
  if (event.key === "ArrowDown") {
    event.preventDefault();
    if (buttons.length) buttons[Math.min(at + 1, buttons.length - 1)].focus();
  } else if (event.key === "ArrowUp") {
    event.preventDefault();
    if (at <= 0) $("search").focus();
    else buttons[at - 1].focus();
  } else if (event.key === "Enter" && document.activeElement === $("search") && buttons.length) {
    event.preventDefault();
    buttons[0].click();
  } else if (event.key === "Escape" && $("search").value) {
    event.preventDefault();
    $("search").value = "";
    $("search").focus();
    loadList();
  }
});

// --- An item -------------------------------------------------------------------------------------------------------

function date(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

function row(id, value) {
  $(`${id}-row`).hidden = value === undefined || value === null || value === "";
  return !$(`${id}-row`).hidden;
}

async function openItem(itemId) {
  const answer = await send({ kind: "item", itemId });
  if (answer.error) {
    if (answer.error.code === "locked") showUnlock(explain(answer.error));
    else say(explain(answer.error));
    return;
  }
  showItem(answer.result.item);
}

async function showItem(item) {
  show("item");
  state.item = item;
  state.password = item.kind === "password" ? item.password : null;
  state.shown = false;
  $("item-title").textContent = item.sites.length ? item.sites.join(", ") : item.title;
  $("item-kind").textContent = KIND_NAMES[item.kind] || item.kind;
  if (row("username", item.username)) $("username-value").textContent = item.username;
  row("password", state.password);
  renderPassword();
  if (row("sites", item.kind === "password" && item.sites.length > 1 ? "yes" : "")) {
    $("sites-value").textContent = item.sites.join(", ");
  }
  if (row("display", item.kind === "passkey" ? item.displayName : "")) $("display-value").textContent = item.displayName;
  if (row("notes", item.notes)) $("notes-value").textContent = item.notes;
  $("created-value").textContent = date(item.created);
  if (row("used", item.lastUsed)) $("used-value").textContent = date(item.lastUsed);
  row("code", item.kind === "code" ? "yes" : "");
  $("show-code").hidden = item.codeType !== "hotp";
  $("copy-code").hidden = item.codeType === "hotp";
  $("code-countdown").textContent = "";
  if (item.codeType === "totp") await refreshCode();
  const passkeys = item.passkeys.map((p) => {
    const li = document.createElement("li");
    const name = p.displayName && p.displayName !== p.userName ? `${p.userName} (${p.displayName})` : p.userName;
    li.textContent = t("extension.popup.passkey-line", { name: name || "—", date: date(p.created) });
    return li;
  });
  $("passkeys-heading").hidden = passkeys.length === 0;
  $("item-passkeys").replaceChildren(...passkeys);
  $("back").focus();
}

function renderPassword() {
  const value = $("password-value");
  if (state.shown && state.password !== null) {
    value.textContent = state.password;
    value.setAttribute("aria-label", t("extension.popup.password"));
  } else {
    value.textContent = "••••••••";
    value.setAttribute("aria-label", t("extension.popup.password-hidden"));
  }
  $("toggle-password").textContent = state.shown ? t("extension.popup.hide") : t("extension.popup.show");
  $("toggle-password").setAttribute("aria-pressed", String(state.shown));
  $("toggle-password").setAttribute(
    "aria-label", state.shown ? t("extension.popup.hide-password") : t("extension.popup.show-password"));
}

$("toggle-password").addEventListener("click", () => {
  state.shown = !state.shown;
  renderPassword();
});

async function refreshCode() {
  if (!state.item || state.item.kind !== "code") return;
  const itemId = state.item.itemId;
  const answer = await send({ kind: "itemCode", itemId });
  if (!state.item || state.item.itemId !== itemId) return;
  if (answer.error) { say(explain(answer.error)); return; }
  const { code, secondsLeft } = answer.result;
  $("code-value").textContent = code;
  if (state.codeTimer) clearInterval(state.codeTimer);
  state.codeTimer = null;
  if (typeof secondsLeft !== "number") return;
  // The countdown runs on the browser's clock, from the host's seconds left; at zero the next code is asked for.
  const ends = Date.now() + secondsLeft * 1000;
  const tick = () => {
    const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
    $("code-countdown").textContent = `changes in ${left} s`;
    if (left === 0) refreshCode();
  };
  tick();
  state.codeTimer = setInterval(tick, 250);
}

$("show-code").addEventListener("click", refreshCode);

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    say(t("extension.popup.copy-refused", { what }));
    return;
  }
  const answer = await send({ kind: "clearClipboardLater" });
  const seconds = answer.result ? answer.result.seconds : CLEAR_DEFAULT;
  say(t("extension.popup.copied", { what, seconds }));
}

// --- Settings ------------------------------------------------------------------------------------------------------

async function loadSettings() {
  const stored = (await chrome.storage.local.get(CLEAR_SETTING))[CLEAR_SETTING];
  const choices = [...$("clear-seconds").options].map((o) => Number(o.value));
  $("clear-seconds").value = String(choices.includes(stored) ? stored : CLEAR_DEFAULT);
}

$("clear-seconds").addEventListener("change", async () => {
  const seconds = Number($("clear-seconds").value);
  await chrome.storage.local.set({ [CLEAR_SETTING]: seconds });
  say(t("extension.popup.clear-set", { after: $("clear-seconds").selectedOptions[0].textContent }));
});

$("copy-username").addEventListener("click", () => state.item && copy(state.item.username, t("extension.popup.what-user-name")));
$("copy-password").addEventListener("click", () => state.password !== null && copy(state.password, t("extension.popup.what-password")));
$("copy-code").addEventListener("click", () => copy($("code-value").textContent, t("extension.popup.what-code")));

$("back").addEventListener("click", () => { showList(); });

// --- Editing, deleting, generating ---------------------------------------------------------------------------------

$("new-password").addEventListener("click", () => {
  state.creating = true;
  show("edit");
  $("edit-title").textContent = t("extension.popup.new-password-title");
  $("edit-site-field").hidden = false;
  $("edit-site").value = state.origin ? new URL(state.origin).hostname : "";
  $("edit-username-field").hidden = false;
  $("edit-display-field").hidden = true;
  $("edit-password-field").hidden = false;
  $("edit-username").value = "";
  $("edit-password").value = "";
  $("edit-notes").value = "";
  $("strength").textContent = "";
  $("edit-error").textContent = "";
  $("fill-and-save").hidden = state.tabId === null || !state.origin;
  generatePassword();
  ($("edit-site").value ? $("edit-username") : $("edit-site")).focus();
});

// A new password: saved as `sesame keychain add-password` does, and with "Fill and save" also typed into the
// current tab's sign-up form (its user name and new-password fields), by the extension's script in that page.
async function addPassword(fill) {
  const username = $("edit-username").value;
  const password = $("edit-password").value;
  const answer = await send({ kind: "addPassword", site: $("edit-site").value, username, password,
                              notes: $("edit-notes").value });
  if (answer.error) {
    $("edit-error").textContent = answer.error.code === "invalidItem"
      ? t("extension.popup.refused-new")
      : answer.error.code === "malformedNativeMessage" ? t("extension.popup.password-needed") : explain(answer.error);
    return;
  }
  state.creating = false;
  let saved = t("extension.popup.saved");
  if (fill && state.tabId !== null) {
    try {
      const reply = await chrome.tabs.sendMessage(state.tabId, { kind: "fillNewPassword", username, password });
      saved = reply && reply.filled ? t("extension.popup.saved-filled") : t("extension.popup.saved-no-field");
    } catch {
      saved = t("extension.popup.saved-not-filled");
    }
  }
  await showItem(answer.result.item);
  say(saved);
}

$("fill-and-save").addEventListener("click", () => addPassword(true));

$("edit").addEventListener("click", () => {
  const item = state.item;
  if (!item) return;
  state.creating = false;
  show("edit");
  $("edit-site-field").hidden = true;
  $("fill-and-save").hidden = true;
  $("edit-title").textContent = t("extension.popup.edit-title", { name: $("item-title").textContent });
  $("edit-username-field").hidden = item.kind === "code";
  $("edit-display-field").hidden = item.kind !== "passkey";
  $("edit-password-field").hidden = item.kind !== "password";
  $("edit-username").value = item.username || "";
  $("edit-display").value = item.displayName || "";
  $("edit-password").value = item.kind === "password" ? state.password : "";
  $("edit-notes").value = item.notes || "";
  $("strength").textContent = "";
  $("edit-error").textContent = "";
  (item.kind === "code" ? $("edit-notes") : $("edit-username")).focus();
});

$("edit-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (state.creating) { await addPassword(false); return; }
  const item = state.item;
  if (!item) return;
  const change = { kind: "updateItem", itemId: item.itemId, notes: $("edit-notes").value };
  if (item.kind !== "code") change.username = $("edit-username").value;
  if (item.kind === "passkey") change.displayName = $("edit-display").value;
  if (item.kind === "password") change.password = $("edit-password").value;
  const answer = await send(change);
  if (answer.error) {
    $("edit-error").textContent = answer.error.code === "invalidItem"
      ? t("extension.popup.refused-edit")
      : explain(answer.error);
    return;
  }
  await showItem(answer.result.item);
  say(t("extension.popup.saved"));
});

function leaveEdit() {
  if (state.creating) { state.creating = false; showList(); } else if (state.item) showItem(state.item);
}

$("cancel-edit").addEventListener("click", leaveEdit);

$("delete").addEventListener("click", async () => {
  const item = state.item;
  if (!item) return;
  const name = $("item-title").textContent;
  const answer = await send({ kind: "deleteItem", itemId: item.itemId });
  if (answer.error) { say(explain(answer.error)); return; }
  await showList();
  say(t("extension.popup.deleted", { name }), {
    seconds: answer.result.undoSeconds,
    run: async () => {
      const undone = await send({ kind: "undoDelete", itemId: item.itemId });
      if (undone.error) { say(t("extension.popup.undo-gone")); return; }
      await loadList();
      say(t("extension.popup.restored", { name }));
    },
  });
  $("undo").focus();
});

// --- A code generator from its link ---------------------------------------------------------------------------------

// The largest QR image the host takes (QRReader.maximumImageBytes): its base64 fits in one native message.
const QR_IMAGE_BYTES = 512 * 1024;

// A PNG or JPEG file as base64 (the host checks the bytes again), or a message saying why not.
async function qrImage(file) {
  if (!["image/png", "image/jpeg"].includes(file.type)) return { refused: t("extension.popup.qr-type") };
  if (file.size > QR_IMAGE_BYTES) return { refused: t("extension.popup.qr-size") };
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { image: btoa(binary) };
}

const QR_MESSAGES = {
  qrUnreadable: t("extension.popup.qr-unreadable"),
  qrDecoderUnavailable: t("extension.popup.qr-no-decoder"),
};

$("add-code-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const uri = $("code-uri").value.trim();
  const file = $("code-qr").files[0];
  if (!uri && !file) return;
  let request = { kind: "addCode", uri, site: $("code-site").value };
  if (file && !uri) {
    const read = await qrImage(file);
    if (read.refused) { $("code-qr").value = ""; say(read.refused); return; }
    request = { kind: "addCodeQR", image: read.image, site: $("code-site").value };
  }
  const answer = await send(request);
  if (answer.error) {
    if (request.kind === "addCodeQR") $("code-qr").value = "";  // a refused image is not sent again
    say(QR_MESSAGES[answer.error.code] || (answer.error.code === "invalidItem"
      ? (file && !uri ? t("extension.popup.code-refused-qr") : t("extension.popup.code-refused"))
      : explain(answer.error)));
    return;
  }
  $("code-uri").value = "";
  $("code-qr").value = "";
  $("code-site").value = "";
  $("add-code").open = false;
  await showItem(answer.result.item);
  say(t("extension.popup.code-added"));
});

// --- Sync and devices ----------------------------------------------------------------------------------------------

async function loadSync() {
  const answer = await send({ kind: "syncStatus" });
  if (answer.error) { $("sync-state").textContent = explain(answer.error); return; }
  const r = answer.result;
  $("sync-state").textContent = t("extension.popup.sync-state", {
    version: r.version, pending: r.pendingChanges, last: lastSyncedText(r.lastSynced),
  }) + (r.configured ? "" : ` ${t("extension.popup.no-sync")}`);
  $("sync-now").disabled = !r.configured;
  $("approve").disabled = !r.configured;
  $("devices").replaceChildren(...r.devices.map((d) => {
    const li = document.createElement("li");
    li.textContent = t(d.thisDevice ? "extension.popup.this-device" : "extension.popup.device-line",
      { name: d.name, key: d.fingerprint, date: date(d.added) });
    if (!d.thisDevice) li.append(" ", removeButton(d));
    return li;
  }));
  if (r.configured) await loadWaiting();
  else showWaiting([], t("extension.popup.no-sync"));
}

// Devices asking to join, from the sync server: each shows a code whose first 12 characters are listed here (the
// rest is its secret). Approve one by typing its whole code below; refuse one with its button, which ends its join.
async function loadWaiting() {
  const answer = await send({ kind: "waitingDevices" });
  if (answer.error) { showWaiting([], explain(answer.error)); return; }
  showWaiting(answer.result.waiting, t("extension.popup.no-waiting"));
}

function showWaiting(waiting, none) {
  if (waiting.length === 0) {
    const li = document.createElement("li");
    li.className = "hint";
    li.textContent = none;
    $("waiting").replaceChildren(li);
    return;
  }
  $("waiting").replaceChildren(...waiting.map((w) => {
    const li = document.createElement("li");
    li.textContent = t("extension.popup.waiting-line", { code: w.codeStart });
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = t("extension.popup.refuse");
    button.dataset.codeStart = w.codeStart;
    button.setAttribute("aria-label", t("extension.popup.refuse-label", { code: w.codeStart }));
    button.addEventListener("click", async () => {
      button.disabled = true;
      const refused = await send({ kind: "refuseDevice", joinRequest: w.joinRequest });
      button.disabled = false;
      if (refused.error) { say(explain(refused.error)); return; }
      await loadWaiting();
      say(t("extension.popup.refused-device", { code: w.codeStart }));
    });
    li.append(" ", button);
    return li;
  }));
}

// When this device last synced successfully, in the browser's own time zone, to the minute.
function lastSyncedText(ms) {
  if (typeof ms !== "number") return t("extension.popup.never-synced");
  const at = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return t("extension.popup.last-synced", {
    time: `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}`,
  });
}

// Removing a device takes two presses of its button (the first asks), since it cannot be undone: the device is
// out of the vault's list and the vault key rotates at the sync that follows.
function removeButton(device) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = t("extension.popup.remove");
  button.setAttribute("aria-label", t("extension.popup.remove-label", { name: device.name }));
  let asked = false;
  button.addEventListener("click", async () => {
    if (!asked) {
      asked = true;
      button.textContent = t("extension.popup.remove-ask");
      button.setAttribute("aria-label", t("extension.popup.remove-ask-label", { name: device.name }));
      return;
    }
    const answer = await send({ kind: "removeDevice", deviceId: device.deviceId });
    if (answer.error) { say(explain(answer.error)); return; }
    await loadSync();
    say(t(answer.result.version === undefined ? "extension.popup.removed-later" : "extension.popup.removed-now",
      { name: answer.result.removed }));
  });
  return button;
}

$("sync").addEventListener("toggle", () => { if ($("sync").open) loadSync(); });

$("sync-now").addEventListener("click", async () => {
  $("sync-now").disabled = true;
  say(t("extension.popup.syncing"));
  const answer = await send({ kind: "syncNow" });
  $("sync-now").disabled = false;
  if (answer.error) { say(explain(answer.error)); return; }
  const r = answer.result;
  await loadList();
  await loadSync();
  // Only the message's own placeholders: their values go by position (their names' alphabetical order).
  const counts = { version: r.version, received: r.received, sent: r.sent };
  say(r.conflictCopies ? t("extension.popup.synced-conflicts", { ...counts, conflicts: r.conflictCopies })
    : t("extension.popup.synced", counts));
});

$("approve-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const pairingCode = $("pairing-code").value.trim();
  if (!pairingCode) return;
  say(t("extension.popup.approving"));
  const answer = await send({ kind: "approveDevice", pairingCode, deviceName: $("device-name").value.trim() });
  if (answer.error) {
    say(answer.error.code === "pairingCodeMalformed" ? t("extension.popup.code-malformed")
      : answer.error.code === "pairingCodeMismatch" ? t("extension.popup.error-code-mismatch")
        : explain(answer.error));
    return;
  }
  $("pairing-code").value = "";
  await loadSync();  // the approved device leaves the waiting list
  say(t("extension.popup.approved", { name: answer.result.name, key: answer.result.fingerprint }));
});

// --- Import (CXF, Bitwarden, KeePassXC) and export (CXF) --------------------------------------------------------------------------------------

function countsText(counts) {
  return t("extension.popup.counts", { passwords: counts.password, passkeys: counts.passkey, codes: counts.code });
}

// What each export is called when it does not read, by the host's error code.
const IMPORT_REFUSALS = {
  cxf: { invalidCXF: t("extension.popup.import-not-cxf"),
         unsupportedCXFVersion: t("extension.popup.import-not-cxf") },
  bitwarden: { encryptedExport: t("extension.popup.import-encrypted"),
               invalidExport: t("extension.popup.import-not-bitwarden"),
               unsupportedPasskeyKey: t("extension.popup.import-key-kind"),
               malformedPasskeyKey: t("extension.popup.import-key-unreadable") },
  keepassxc: { invalidExport: t("extension.popup.import-not-keepassxc") },
};

$("import-file").addEventListener("change", async () => {
  const file = $("import-file").files[0];
  if (!file) return;
  const format = $("import-format").value;
  let request;
  try {
    const text = await file.text();
    if (format === "cxf") {
      try {
        request = { kind: "importCXF", document: JSON.parse(text) };
      } catch {
        say(t("extension.popup.import-not-json"));
        return;
      }
    } else {
      request = { kind: format === "bitwarden" ? "importBitwarden" : "importKeePassXC", export: text };
    }
  } finally {
    $("import-file").value = "";
  }
  const answer = await send(request);
  if (answer.error) {
    say(IMPORT_REFUSALS[format][answer.error.code] || explain(answer.error));
    return;
  }
  const r = answer.result;
  const skipped = Object.values(r.skippedTypes).reduce((a, b) => a + b, 0);
  await loadList();
  const more = (skipped ? t("extension.popup.imported-skipped", { count: skipped }) : "")
    + (r.failures.length ? t("extension.popup.imported-failed", { count: r.failures.length }) : "");
  say(t("extension.popup.imported", { counts: countsText(r.imported), duplicates: r.duplicates, more }));
});

async function exportCXF() {
  const answer = await send({ kind: "exportCXF" });
  if (answer.error && answer.error.code === "userVerificationRequired") {
    $("verify-form").hidden = false;
    $("verify-passphrase").focus();
    say(t("extension.popup.export-passphrase"));
    return;
  }
  if (answer.error) { say(explain(answer.error)); return; }
  const blob = new Blob([JSON.stringify(answer.result.document, null, 2)], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `sesame-keychain-${new Date().toISOString().slice(0, 10)}.cxf.json`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60 * 1000);
  say(t("extension.popup.exported", { counts: countsText(answer.result.exported), file: link.download }));
}

$("export").addEventListener("click", exportCXF);

$("verify-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const passphrase = $("verify-passphrase").value;
  $("verify-passphrase").value = "";
  const answer = await send({ kind: "unlock", passphrase });
  if (answer.error) { say(explain(answer.error)); return; }
  $("verify-form").hidden = true;
  await exportCXF();
});

// The generator: each character drawn uniformly from the chosen classes with crypto.getRandomValues (rejection
// sampling, so no character is likelier than another); strength is length × log2(alphabet size) bits.
const CLASSES = {
  "gen-lower": "abcdefghijkmnopqrstuvwxyz",
  "gen-upper": "ABCDEFGHJKLMNPQRSTUVWXYZ",
  "gen-digits": "23456789",
  "gen-symbols": "!#$%&*+-=?@^_~",
};

// Words: drawn by the host from the EFF long word list (`generatePassword`, the library call of `sesame keychain
// add-password --generate --words N`), so the list and the drawing are the CLI's; the host says the strength.
async function generateWords() {
  const words = Math.max(3, Math.min(20, Number($("gen-word-count").value) || 6));
  const answer = await send({ kind: "generatePassword", words });
  if (answer.error) { $("strength").textContent = explain(answer.error); return; }
  const r = answer.result;
  $("edit-password").value = r.password;
  $("strength").textContent = t("extension.popup.strength-words", {
    bits: Math.floor(r.bits), words, list: r.list, size: r.listSize.toLocaleString(chrome.i18n.getUILanguage()),
  });
}

function generateMode() {
  return $("gen-mode-words").checked ? "words" : "characters";
}

for (const id of ["gen-mode-characters", "gen-mode-words"]) {
  $(id).addEventListener("change", () => {
    $("gen-characters").hidden = generateMode() !== "characters";
    $("gen-words").hidden = generateMode() !== "words";
    generatePassword();
  });
}

function generatePassword() {
  if (generateMode() === "words") { generateWords(); return; }
  const alphabet = Object.keys(CLASSES).filter((id) => $(id).checked).map((id) => CLASSES[id]).join("");
  const length = Math.max(8, Math.min(128, Number($("gen-length").value) || 20));
  if (!alphabet) { $("strength").textContent = t("extension.popup.choose-class"); return; }
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  $("edit-password").value = out;
  const bits = Math.floor(length * Math.log2(alphabet.length));
  $("strength").textContent = t("extension.popup.strength-characters", { bits, length, alphabet: alphabet.length });
}

$("generate").addEventListener("click", generatePassword);
$("edit-password").addEventListener("input", () => { $("strength").textContent = ""; });

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && state.view === "item") {
    event.preventDefault();
    showList();
  } else if (event.key === "Escape" && state.view === "edit") {
    event.preventDefault();
    leaveEdit();
  }
});

start();
