// Sesame Keychain: the toolbar window (action popup). It talks to the native host through the service worker, which
// serves these requests only to this page. The passphrase typed here goes to the host once and is not kept; the
// host's unlock session (and its idle lock) is the only state.
//
// Opened as the action popup, "the current site" is the active tab's; opened in a tab (tests, or a person who
// prefers it), `popup.html?tab=ID` names the tab whose site comes first. The one thing it stores is a setting: how
// long a copied secret stays on the clipboard.
"use strict";

const $ = (id) => document.getElementById(id);
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
  wrongPassphrase: "That passphrase does not open this keychain.",
  locked: "The keychain is locked.",
  hostUnavailable: "The keychain's native host is not reachable. Run `sesame keychain install-browser`.",
  vaultNotFound: "There is no keychain on this computer yet. Run `sesame keychain init`.",
  itemNotFound: "That item is no longer in the keychain.",
  pairingCodeMismatch: "No device waiting to join shows that code.",
};
function explain(error) {
  return MESSAGES[error && error.code] || `The keychain refused (${(error && error.code) || "unknown"}).`;
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
      showUnlock("The keychain locked itself after it went unused.");
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
  say("Unlocking…");
  const answer = await send({ kind: "unlock", passphrase });
  $("unlock").disabled = false;
  if (answer.error) {
    say("");
    showUnlock(explain(answer.error));
    return;
  }
  say("Unlocked.");
  watchIdleLock(answer.result);
  await showList();
});

$("lock").addEventListener("click", async () => {
  const answer = await send({ kind: "lock" });
  if (answer.error) { say(explain(answer.error)); return; }
  say("Locked.");
  watchIdleLock(null);
  showUnlock();
});

// --- The list ------------------------------------------------------------------------------------------------------

const KIND_NAMES = { passkey: "Passkey", password: "Password", code: "Code" };

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
    ? `${item.username || "—"} · created ${date(item.created)}` : (item.username || "—");
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
  $("site-heading").textContent = site ? `This site: ${site}` : "";
  $("site-items").replaceChildren(...mine.map(itemButton));
  if (site && mine.length === 0 && !query) {
    const none = document.createElement("li");
    none.className = "hint";
    none.textContent = "Nothing saved for this site.";
    $("site-items").replaceChildren(none);
  }
  $("other-heading").textContent = query ? (site ? "Other matches" : "Matches") : (site ? "Other items" : "All items");
  $("other-heading").hidden = others.length === 0;
  $("other-items").replaceChildren(...others.map(itemButton));
  $("empty").hidden = items.length > 0;
  say(more ? "Showing the first 200; search to narrow." : "");
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
    li.textContent = `${name || "—"}, created ${date(p.created)}`;
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
    value.setAttribute("aria-label", "Password");
  } else {
    value.textContent = "••••••••";
    value.setAttribute("aria-label", "Password, hidden");
  }
  $("toggle-password").textContent = state.shown ? "Hide" : "Show";
  $("toggle-password").setAttribute("aria-pressed", String(state.shown));
  $("toggle-password").setAttribute("aria-label", state.shown ? "Hide password" : "Show password");
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
    say(`The browser did not let the keychain copy the ${what}.`);
    return;
  }
  const answer = await send({ kind: "clearClipboardLater" });
  const seconds = answer.result ? answer.result.seconds : CLEAR_DEFAULT;
  say(`Copied the ${what}; the clipboard is cleared in ${seconds} s.`);
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
  say(`Copied secrets now leave the clipboard after ${$("clear-seconds").selectedOptions[0].textContent}.`);
});

$("copy-username").addEventListener("click", () => state.item && copy(state.item.username, "user name"));
$("copy-password").addEventListener("click", () => state.password !== null && copy(state.password, "password"));
$("copy-code").addEventListener("click", () => copy($("code-value").textContent, "code"));

$("back").addEventListener("click", () => { showList(); });

// --- Editing, deleting, generating ---------------------------------------------------------------------------------

$("new-password").addEventListener("click", () => {
  state.creating = true;
  show("edit");
  $("edit-title").textContent = "New password";
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
      ? "The keychain refused this: the site is not a host name, or a field is too long or empty."
      : answer.error.code === "malformedNativeMessage" ? "A password is needed." : explain(answer.error);
    return;
  }
  state.creating = false;
  let filled = "";
  if (fill && state.tabId !== null) {
    try {
      const reply = await chrome.tabs.sendMessage(state.tabId, { kind: "fillNewPassword", username, password });
      filled = reply && reply.filled ? " and filled in the page" : "; the page has no field to fill";
    } catch {
      filled = "; the page could not be filled";
    }
  }
  await showItem(answer.result.item);
  say(`Saved${filled}.`);
}

$("fill-and-save").addEventListener("click", () => addPassword(true));

$("edit").addEventListener("click", () => {
  const item = state.item;
  if (!item) return;
  state.creating = false;
  show("edit");
  $("edit-site-field").hidden = true;
  $("fill-and-save").hidden = true;
  $("edit-title").textContent = `Edit ${$("item-title").textContent}`;
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
      ? "The keychain refused this: a field is empty, too long, or has characters it does not keep."
      : explain(answer.error);
    return;
  }
  await showItem(answer.result.item);
  say("Saved.");
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
  say(`Deleted ${name}.`, {
    seconds: answer.result.undoSeconds,
    run: async () => {
      const undone = await send({ kind: "undoDelete", itemId: item.itemId });
      if (undone.error) { say("It can no longer be undone."); return; }
      await loadList();
      say(`Restored ${name}.`);
    },
  });
  $("undo").focus();
});

// --- A code generator from its link ---------------------------------------------------------------------------------

// The largest QR image the host takes (QRReader.maximumImageBytes): its base64 fits in one native message.
const QR_IMAGE_BYTES = 512 * 1024;

// A PNG or JPEG file as base64 (the host checks the bytes again), or a message saying why not.
async function qrImage(file) {
  if (!["image/png", "image/jpeg"].includes(file.type)) return { refused: "The QR image must be a PNG or JPEG file." };
  if (file.size > QR_IMAGE_BYTES) return { refused: "The QR image is over 512 KiB; a screenshot of the code will do." };
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { image: btoa(binary) };
}

const QR_MESSAGES = {
  qrUnreadable: "No QR code could be read in that image. Try a sharper, larger image with only the code in it.",
  qrDecoderUnavailable: "Reading QR images needs zbarimg on this computer (Debian package zbar-tools).",
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
      ? `That is not an otpauth:// link the keychain reads${file && !uri ? " (the image's QR code)" : ""}, or the site`
        + " is not a host name." : explain(answer.error)));
    return;
  }
  $("code-uri").value = "";
  $("code-qr").value = "";
  $("code-site").value = "";
  $("add-code").open = false;
  await showItem(answer.result.item);
  say("Added the code generator.");
});

// --- Sync and devices ----------------------------------------------------------------------------------------------

async function loadSync() {
  const answer = await send({ kind: "syncStatus" });
  if (answer.error) { $("sync-state").textContent = explain(answer.error); return; }
  const r = answer.result;
  $("sync-state").textContent = `Vault version ${r.version}; ${r.pendingChanges} change${
    r.pendingChanges === 1 ? "" : "s"} not yet synced. ` + lastSyncedText(r.lastSynced)
    + (r.configured ? "" : " No sync folder or server is set up.");
  $("sync-now").disabled = !r.configured;
  $("approve").disabled = !r.configured;
  $("devices").replaceChildren(...r.devices.map((d) => {
    const li = document.createElement("li");
    li.textContent = `${d.name}${d.thisDevice ? " (this device)" : ""}, key ${d.fingerprint}, added ${date(d.added)}`;
    if (!d.thisDevice) li.append(" ", removeButton(d));
    return li;
  }));
  if (r.configured) await loadWaiting();
  else showWaiting([], "No sync folder or server is set up.");
}

// Devices asking to join, from the sync server: each shows a code whose first 12 characters are listed here (the
// rest is its secret). Approve one by typing its whole code below; refuse one with its button, which ends its join.
async function loadWaiting() {
  const answer = await send({ kind: "waitingDevices" });
  if (answer.error) { showWaiting([], explain(answer.error)); return; }
  showWaiting(answer.result.waiting, "No device is waiting.");
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
    li.textContent = `A device showing ${w.codeStart}…`;
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "Refuse";
    button.dataset.codeStart = w.codeStart;
    button.setAttribute("aria-label", `Refuse the device showing ${w.codeStart}`);
    button.addEventListener("click", async () => {
      button.disabled = true;
      const refused = await send({ kind: "refuseDevice", joinRequest: w.joinRequest });
      button.disabled = false;
      if (refused.error) { say(explain(refused.error)); return; }
      await loadWaiting();
      say(`Refused the device showing ${w.codeStart}…; its join has ended.`);
    });
    li.append(" ", button);
    return li;
  }));
}

// When this device last synced successfully, in the browser's own time zone, to the minute.
function lastSyncedText(ms) {
  if (typeof ms !== "number") return "Never synced.";
  const at = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `Last synced ${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} `
    + `${pad(at.getHours())}:${pad(at.getMinutes())}.`;
}

// Removing a device takes two presses of its button (the first asks), since it cannot be undone: the device is
// out of the vault's list and the vault key rotates at the sync that follows.
function removeButton(device) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Remove";
  button.setAttribute("aria-label", `Remove ${device.name}`);
  let asked = false;
  button.addEventListener("click", async () => {
    if (!asked) {
      asked = true;
      button.textContent = "Remove it for good?";
      button.setAttribute("aria-label", `Press again to remove ${device.name} for good`);
      return;
    }
    const answer = await send({ kind: "removeDevice", deviceId: device.deviceId });
    if (answer.error) { say(explain(answer.error)); return; }
    await loadSync();
    say(`Removed ${answer.result.removed}; the vault key ` +
        (answer.result.version === undefined ? "rotates at the next sync." : "rotated."));
  });
  return button;
}

$("sync").addEventListener("toggle", () => { if ($("sync").open) loadSync(); });

$("sync-now").addEventListener("click", async () => {
  $("sync-now").disabled = true;
  say("Syncing…");
  const answer = await send({ kind: "syncNow" });
  $("sync-now").disabled = false;
  if (answer.error) { say(explain(answer.error)); return; }
  const r = answer.result;
  await loadList();
  await loadSync();
  say(`Synced: vault version ${r.version}, ${r.received} received, ${r.sent} sent` +
      (r.conflictCopies ? `, ${r.conflictCopies} conflict copies kept` : "") + ".");
});

$("approve-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const pairingCode = $("pairing-code").value.trim();
  if (!pairingCode) return;
  say("Approving…");
  const answer = await send({ kind: "approveDevice", pairingCode, deviceName: $("device-name").value.trim() });
  if (answer.error) {
    say(answer.error.code === "pairingCodeMalformed" ? "That is not a device's code: check what it shows."
      : answer.error.code === "pairingCodeMismatch" ? "No device waiting to join shows that code."
        : explain(answer.error));
    return;
  }
  $("pairing-code").value = "";
  await loadSync();  // the approved device leaves the waiting list
  say(`Approved ${answer.result.name} (key ${answer.result.fingerprint}).`);
});

// --- Import (CXF, Bitwarden, KeePassXC) and export (CXF) --------------------------------------------------------------------------------------

function countsText(counts) {
  return `${counts.password} passwords, ${counts.passkey} passkeys, ${counts.code} code generators`;
}

// What each export is called when it does not read, by the host's error code.
const IMPORT_REFUSALS = {
  cxf: { invalidCXF: "That file is not a CXF document this keychain reads.",
         unsupportedCXFVersion: "That file is not a CXF document this keychain reads." },
  bitwarden: { encryptedExport: "That Bitwarden export is encrypted: export again as JSON without a password.",
               invalidExport: "That file is not a Bitwarden JSON export this keychain reads.",
               unsupportedPasskeyKey: "A passkey in that Bitwarden export is not ECDSA P-256, the only kind the "
                 + "keychain imports from Bitwarden: nothing was imported.",
               malformedPasskeyKey: "A passkey's key in that Bitwarden export does not read: nothing was imported." },
  keepassxc: { invalidExport: "That file is not a KeePassXC CSV export this keychain reads." },
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
        say("That file is not a CXF document (not JSON).");
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
  say(`Imported ${countsText(r.imported)}; ${r.duplicates} already here` +
      (skipped ? `; ${skipped} of kinds the keychain does not keep` : "") +
      (r.failures.length ? `; ${r.failures.length} could not be read` : "") + ".");
});

async function exportCXF() {
  const answer = await send({ kind: "exportCXF" });
  if (answer.error && answer.error.code === "userVerificationRequired") {
    $("verify-form").hidden = false;
    $("verify-passphrase").focus();
    say("Type the passphrase again to export.");
    return;
  }
  if (answer.error) { say(explain(answer.error)); return; }
  const blob = new Blob([JSON.stringify(answer.result.document, null, 2)], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `sesame-keychain-${new Date().toISOString().slice(0, 10)}.cxf.json`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60 * 1000);
  say(`Exported ${countsText(answer.result.exported)} to ${link.download}; it holds secrets in clear.`);
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
  $("strength").textContent = `About ${Math.floor(r.bits)} bits of entropy (${words} words from ${r.list}, `
    + `${r.listSize.toLocaleString("en")} words).`;
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
  if (!alphabet) { $("strength").textContent = "Choose at least one kind of character."; return; }
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  $("edit-password").value = out;
  const bits = Math.floor(length * Math.log2(alphabet.length));
  $("strength").textContent = `About ${bits} bits of entropy (${length} characters from ${alphabet.length}).`;
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
