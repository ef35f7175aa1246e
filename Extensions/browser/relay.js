// Sesame Keychain: the relay and the in-page prompts (content script in the extension's isolated world).
//
// It carries page.js's requests to the service worker (chrome.runtime.sendMessage; the worker adds the origin the
// browser reports for this frame) and owns everything the person sees: the AutoFill suggestions under fields whose
// autocomplete tokens include `webauthn`, and the modal prompt. Both live in a closed shadow root made from this
// world, so page scripts cannot read which accounts are offered, and they act only on trusted events (a real click
// or key press; a page's synthetic events have isTrusted false). Which passkeys exist goes from the worker to here
// and never to the page; the page learns one credential, after the person picked it.
(() => {
  "use strict";
  const PAGE = "sesame-keychain/page";
  const RELAY = "sesame-keychain/relay";
  const requests = new Map(); // id -> { cancel() }
  // The person's words, from _locales (made from the catalog's extension.* keys: `sesame catalog extension-locales`);
  // a message's {placeholders} are passed in their names' alphabetical order, as the generator numbers them.
  const t = (key, values = {}) => chrome.i18n.getMessage(
    key.slice("extension.".length).replace(/[.-]/g, "_"),
    Object.keys(values).sort().map((name) => String(values[name])));
  const DIRECTION = chrome.i18n.getMessage("@@bidi_dir") || "ltr";

  // A field focused by the page's script alone (the person has not clicked or typed in the last few seconds: no
  // transient user activation) gets no suggestions until the person clicks it. Otherwise a page could focus its own
  // field at load, unseen, and learn from whether our host appears if the keychain holds anything for its site
  // (docs/threat-model.md, the second review's suspicions). Browsers without navigator.userActivation are not gated.
  function personIsActive() {
    return !navigator.userActivation || navigator.userActivation.isActive;
  }

  function reply(id, message) {
    window.postMessage({ source: RELAY, id, ...message }, window.location.origin);
  }
  function worker(message) {
    return new Promise((resolve) => {
      try {
        chrome.runtime.sendMessage(message, (answer) => {
          if (chrome.runtime.lastError || !answer) {
            resolve({ error: { name: "NotAllowedError", code: "extensionUnavailable" } });
          } else {
            resolve(answer);
          }
        });
      } catch {
        resolve({ error: { name: "NotAllowedError", code: "extensionUnavailable" } });
      }
    });
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window || !event.data || event.data.source !== PAGE) return;
    const { id, kind } = event.data;
    if (typeof id !== "string") return;
    if (kind === "cancel") {
      const running = requests.get(id);
      if (running) running.cancel();
      requests.delete(id);
      return;
    }
    if (requests.has(id)) return;
    if (kind === "get") handleGet(id, event.data);
    else if (kind === "create") handleCreate(id, event.data);
    else if (kind === "signal") handleSignal(id, event.data);
  });

  // --- Requests ---------------------------------------------------------------------------------------------------

  // Signal API: the page's promise settles once the keychain checked the call. signalCurrentUserDetails renames
  // the passkeys in the host; signalUnknownCredential names a passkey the site no longer accepts, and the person
  // decides here whether to remove it (the page learns nothing of that).
  async function handleSignal(id, data) {
    const answer = await worker({ kind: "signal", signal: data.signal, payload: data.payload });
    reply(id, answer.error ? { error: answer.error } : { done: true });
    const unknown = (answer.result && answer.result.unknown) || [];
    if (data.signal !== "signalUnknownCredential" || unknown.length === 0) return;
    const account = unknown[0];
    const rpId = answer.result.rpId;
    const ui = sheet({
      title: t("extension.relay.unknown-title", { site: rpId }),
      detail: t("extension.relay.unknown-detail", { user: account.userName }),
      confirm: t("extension.relay.unknown-confirm"),
      onConfirm: async () => {
        ui.busy();
        await worker({ kind: "remove", rpId, credentialId: account.credentialId });
        ui.close();
      },
      cancelText: t("extension.relay.unknown-keep"),
      onCancel: () => ui.close(),
    });
  }

  async function handleGet(id, data) {
    let cancelled = false;
    let ui = null;
    requests.set(id, { cancel() { cancelled = true; if (ui) ui.close(); } });
    const done = (message) => {
      if (cancelled) return;
      requests.delete(id);
      if (ui) ui.close();
      reply(id, message);
    };
    const prepared = await worker({ kind: "prepare", ceremony: "get", options: data.options });
    if (cancelled) return;
    if (prepared.error) {
      // AutoFill stays quietly pending when the keychain cannot answer (locked, host missing), as a browser's
      // does with nothing to offer; a SecurityError or TypeError still rejects.
      if (data.mediation === "conditional" && prepared.error.name === "NotAllowedError") return;
      if (prepared.error.code === "locked" && data.mediation !== "immediate") return (ui = lockedSheet(done));
      return done({ error: prepared.error });
    }
    const { rpId, accounts } = prepared.result;
    const pick = async (account) => {
      const answer = await worker({ kind: "get", options: data.options, credentialId: account.credentialId });
      done(answer.error ? { error: answer.error } : { credential: answer.result.credential });
    };
    if (data.mediation === "conditional") {
      // AutoFill: nothing shows until the person focuses a webauthn field; with no passkeys nothing shows at all.
      if (accounts.length > 0) {
        ui = autofill(rpId, accounts, pick, {
          onGone: () => done({ error: { name: "NotAllowedError", code: "cancelled" } }),
        });
      }
      return;
    }
    if (data.mediation === "immediate" && accounts.length === 0) {
      return done({ error: { name: "NotAllowedError", code: "noCredential" } });
    }
    ui = sheet({
      title: accounts.length > 0
        ? t("extension.relay.get-title", { site: rpId }) : t("extension.relay.get-none-title", { site: rpId }),
      detail: accounts.length > 0 ? t("extension.relay.get-detail") : t("extension.relay.get-none-detail"),
      accounts,
      onPick: (account) => { ui.busy(); pick(account); },
      onOther: () => done({ handBack: true }),
      onCancel: () => done({ error: { name: "NotAllowedError", code: "cancelled" } }),
    });
  }

  async function handleCreate(id, data) {
    let cancelled = false;
    let ui = null;
    requests.set(id, { cancel() { cancelled = true; if (ui) ui.close(); } });
    const done = (message) => {
      if (cancelled) return;
      requests.delete(id);
      if (ui) ui.close();
      reply(id, message);
    };
    if (data.mediation === "conditional") {
      // The automatic upgrade: no prompt. The worker allows it only right after the person picked this site's
      // saved password for the same user name; otherwise NotAllowedError, as a browser that is not eligible.
      const made = await worker({ kind: "create", options: data.options, conditional: true });
      return done(made.error ? { error: made.error } : { credential: made.result.credential });
    }
    const prepared = await worker({ kind: "prepare", ceremony: "create", options: data.options });
    if (cancelled) return;
    if (prepared.error && prepared.error.code === "locked") return (ui = lockedSheet(done));
    // The keychain already holds a passkey the site excludes: it cannot serve this request, but a security key or
    // another device can (adding a second authenticator), so the browser's own WebAuthn takes it at once.
    if (prepared.error && prepared.error.code === "credentialExcluded") return done({ handBack: true });
    if (prepared.error) return done({ error: prepared.error });
    const { rpId, userName } = prepared.result;
    ui = sheet({
      title: t("extension.relay.create-title", { site: rpId }),
      detail: t("extension.relay.create-detail", { user: userName }),
      confirm: t("extension.relay.create-confirm"),
      onConfirm: async () => {
        ui.busy();
        const answer = await worker({ kind: "create", options: data.options });
        done(answer.error ? { error: answer.error } : { credential: answer.result.credential });
      },
      onOther: () => done({ handBack: true }),
      onCancel: () => done({ error: { name: "NotAllowedError", code: "cancelled" } }),
    });
  }

  // A locked vault: say so (the host never asks for the passphrase), and offer the browser's own WebAuthn.
  function lockedSheet(done) {
    return sheet({
      title: t("extension.relay.locked-title"),
      detail: t("extension.relay.locked-detail"),
      onOther: () => done({ handBack: true }),
      onCancel: () => done({ error: { name: "NotAllowedError", code: "locked" } }),
    });
  }

  // --- One-time codes ---------------------------------------------------------------------------------------------
  // A field marked autocomplete="one-time-code" offers the code generators saved for this site; picking one fills
  // the current code (asked for only then) and tells the page with input and change events.
  function isCodeField(node) {
    if (!(node instanceof HTMLInputElement)) return false;
    return (node.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/).includes("one-time-code");
  }
  function codeButton(generator) {
    return element("button", { className: "account", type: "button" }, [
      element("span", { className: "name", text: generator.title }),
      element("span", { className: "sub", text: t("extension.relay.code-sub") }),
    ]);
  }
  let codeSuggestions = null;
  let codeField = null;
  // Offered when the field gets the focus, or is clicked while it has it (a page may focus it by script first).
  const offerFill = (event) => {
    if (!event.isTrusted) return;
    if (event.type === "focusin" && !personIsActive()) return;
    if (event.type === "click" && codeSuggestions && codeField === event.target) return;
    if (isCodeField(event.target)) showCodes(event.target);
    else if (isPasswordField(event.target)) showPasswords(event.target);
  };
  window.addEventListener("focusin", offerFill, true);
  window.addEventListener("click", offerFill, true);

  // Passwords: fields marked username (without webauthn, where passkeys are offered) or current-password offer the
  // site's saved passwords; picking one fills the form's user name and password fields.
  function isPasswordField(node) {
    if (!(node instanceof HTMLInputElement)) return false;
    const tokens = (node.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    return (tokens.includes("username") && !tokens.includes("webauthn")) || tokens.includes("current-password");
  }
  function setValue(field, value) {
    field.value = value;
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }
  // One suggestion list under a field (saved passwords or code generators): the site's items from the worker,
  // shown while the field still has the focus; picking one asks the worker for that item and hands it to `fill`.
  async function suggest(field, { list, key, pick, fill, ...options }) {
    codeField = field;
    const answer = await worker({ kind: list });
    const items = (answer.result && answer.result[key]) || [];
    if (items.length === 0 || document.activeElement !== field) return;
    if (codeSuggestions) codeSuggestions.close();
    codeSuggestions = autofill(location.hostname, items, async (item) => {
      codeSuggestions = null;
      const picked = await worker({ kind: pick, itemId: item.itemId });
      if (!picked.result || !field.isConnected) return;
      fill(picked.result);
    }, { matches: (node) => node === field, ...options });
  }
  function showPasswords(field) {
    return suggest(field, {
      list: "passwords", key: "passwords", pick: "password", label: t("extension.relay.passwords-label"),
      fill: (result) => {
        const scope = field.form || document;
        const user = field.getAttribute("autocomplete").includes("username")
          ? field : scope.querySelector('input[autocomplete~="username"]');
        const secret = scope.querySelector('input[type="password"]');
        if (user) setValue(user, result.username);
        if (secret) setValue(secret, result.password);
        filledPassword = result.password;
        worker({ kind: "passwordUsed", username: result.username });
      },
      render: (entry) => element("button", { className: "account", type: "button" }, [
        element("span", { className: "name", text: entry.username }),
        element("span", { className: "sub", text: t("extension.relay.password-sub") }),
      ]),
    });
  }

  // "Fill and save" from the toolbar window: a new password the keychain just saved, typed into this page's sign-up
  // form (its user name field and its new-password field, else its only password field). Only the extension's own
  // pages can send this (pages cannot reach a content script's runtime messages).
  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || !message || message.kind !== "fillNewPassword") return false;
    const secret = document.querySelector('input[autocomplete~="new-password"]')
      || (document.querySelectorAll('input[type="password"]').length === 1
        ? document.querySelector('input[type="password"]') : null);
    if (!secret) { sendResponse({ filled: false }); return false; }
    const scope = secret.form || document;
    const user = scope.querySelector('input[autocomplete~="username"], input[type="email"]');
    if (user && typeof message.username === "string") setValue(user, message.username);
    setValue(secret, String(message.password));
    filledPassword = String(message.password);
    sendResponse({ filled: true });
    return false;
  });

  // Offer to save a password typed into a sign-in form: the form's values are handed to the worker on a real
  // submit, and the next page of this tab on this origin asks "save?". A password the keychain filled is not offered.
  let filledPassword = null;
  window.addEventListener("submit", (event) => {
    if (!event.isTrusted || !(event.target instanceof HTMLFormElement)) return;
    const secret = event.target.querySelector('input[type="password"]');
    if (!secret || secret.value === "" || secret.value === filledPassword) return;
    // Sign-in forms only: a new-password field (sign-up, password change) is not a password that signed in.
    if ((secret.getAttribute("autocomplete") || "").toLowerCase().includes("new-password")) return;
    const user = event.target.querySelector('input[autocomplete~="username"], input[type="email"], input[type="text"]');
    worker({ kind: "offerSave", username: user ? user.value : "", password: secret.value });
  }, true);
  async function offerToSave() {
    const pending = await worker({ kind: "pendingSave" });
    const offer = pending.result;
    if (!offer || !offer.password) return;
    const ui = sheet({
      title: t("extension.relay.save-password-title", { site: location.hostname }),
      detail: t("extension.relay.save-password-detail", { user: offer.username }),
      confirm: t("extension.relay.save-password-confirm"),
      onConfirm: async () => {
        ui.busy();
        await worker({ kind: "savePassword", username: offer.username, password: offer.password });
        ui.close();
      },
      cancelText: t("extension.relay.not-now"),
      onCancel: () => ui.close(),
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", offerToSave, { once: true });
  else offerToSave();

  function showCodes(field) {
    return suggest(field, {
      list: "codes", key: "generators", pick: "code", label: t("extension.relay.codes-label"),
      render: codeButton,
      fill: (result) => {
        field.focus();
        setValue(field, result.code);
      },
    });
  }

  // --- Clickjacking defence ---------------------------------------------------------------------------------------
  // The prompts are drawn in the page, so the page can try to make the person click one without seeing it: hide
  // it (opacity, filters, transforms, clipping on the host or an ancestor), cover it with something that lets
  // clicks through (pointer-events: none), move it, or show it just under a click the person is about to make.
  // So the host sits in the top layer (a manual popover, shown from this world, above all of the page's ordinary
  // content) with a locked inline style, and a prompt acts on a click or key only once it has been shown,
  // unobscured and unmoved, for SETTLE_MS in a row. Until then input is ignored (Cancel and Escape excepted).
  // "Unobscured" is IntersectionObserver v2 (`isVisible`) where the browser has it (Chromium), and in every browser
  // a check repeated every POLL_MS and at the moment of input: the computed style of the host and its ancestors,
  // each actionable element's box inside the viewport, hit tests at its centre and corners (and at the click's
  // point) that must find our host first, no page element entering the top layer after ours, the page visible and
  // focused, no view transition running. Any change to the host or its ancestors' attributes restarts the count;
  // the host removed, moved or hidden while the prompt is open cancels the prompt (as Cancel does).
  const SETTLE_MS = 500;
  const POLL_MS = 100;
  const HOST_STYLE = [
    "all: initial", "display: block", "position: fixed", "inset: 0 auto auto 0", "width: 0", "height: 0",
    "margin: 0", "padding: 0", "border: 0", "overflow: visible", "opacity: 1", "visibility: visible",
    "z-index: 2147483647", "pointer-events: auto",
  ].map((declaration) => `${declaration} !important`).join("; ");
  // Computed values an ancestor or the host must have: anything else may hide, fade, distort or clip the prompt.
  const UNTOUCHED = {
    opacity: "1", filter: "none", transform: "none", translate: "none", scale: "none", rotate: "none",
    "clip-path": "none", "mask-image": "none", "mix-blend-mode": "normal", "offset-path": "none", zoom: "1",
  };
  const TOP_LAYER = [":popover-open", ":modal", ":fullscreen"];
  const hasVisibilityObserver = typeof IntersectionObserverEntry !== "undefined"
    && "isVisible" in IntersectionObserverEntry.prototype;

  function matchesSafely(node, selector) {
    try { return node.matches(selector); } catch { return false; }
  }
  function pageTopLayer(host) {
    const found = new Set();
    for (const selector of TOP_LAYER) {
      try {
        for (const node of document.querySelectorAll(selector)) if (node !== host) found.add(node);
      } catch { /* selector not supported here */ }
    }
    if (document.fullscreenElement && document.fullscreenElement !== host) found.add(document.fullscreenElement);
    return found;
  }

  // Watches one mounted prompt: `targets()` are its actionable elements, `box` carries data-armed (read by the
  // tests through the DevTools protocol or Marionette's privileged scope; the page cannot see it), `onGone` runs
  // when the page removes, moves or hides the host while the prompt is open.
  function guard({ host, root, box, targets, onGone }) {
    const parent = host.parentNode;
    let since = null;     // when the current unobscured, unmoved stretch began
    let layout = "";      // the actionable elements' boxes during that stretch
    let armed = false;
    let stopped = false;
    const visible = new Map(); // target -> IntersectionObserver v2's isVisible (Chromium)
    const before = pageTopLayer(host); // the page's top-layer elements under ours (they were there first)

    const setArmed = (value) => {
      if (value === armed) return;
      armed = value;
      if (value) box.setAttribute("data-armed", "true");
      else box.removeAttribute("data-armed");
    };
    const reset = () => { since = null; setArmed(false); };

    const covered = (x, y, target) => {
      const top = document.elementsFromPoint(x, y)[0];
      if (top !== host) return true;
      const inner = root.elementFromPoint(x, y);
      return !(inner && (inner === target || target.contains(inner)));
    };
    function obstruction() {
      if (!host.isConnected || host.parentNode !== parent) return "removed";
      if (typeof host.showPopover === "function" && !matchesSafely(host, ":popover-open")) return "not in the top layer";
      if (document.visibilityState !== "visible" || !document.hasFocus()) return "page not in front";
      if (matchesSafely(document.documentElement, ":active-view-transition")) return "view transition";
      for (const node of pageTopLayer(host)) if (!before.has(node)) return "page element above the prompt";
      // The host's own ::before and ::after escape its inline style and would paint above its shadow content.
      for (const pseudo of ["::before", "::after"]) {
        const content = getComputedStyle(host, pseudo).content;
        if (content !== "none" && content !== "normal") return `${pseudo} on the host`;
      }
      for (let node = host; node instanceof Element; node = node.parentElement) {
        const style = getComputedStyle(node);
        if (style.display === "none" || style.contentVisibility === "hidden") return "not rendered";
        for (const [property, expected] of Object.entries(UNTOUCHED)) {
          const value = style.getPropertyValue(property);
          if (value !== "" && value !== expected) return `${property} on ${node.localName}`;
        }
      }
      const width = document.documentElement.clientWidth || window.innerWidth;
      const height = document.documentElement.clientHeight || window.innerHeight;
      for (const target of targets()) {
        if (getComputedStyle(target).visibility !== "visible") return "hidden";
        const r = target.getBoundingClientRect();
        if (r.width < 4 || r.height < 4 || r.left < 0 || r.top < 0 || r.right > width || r.bottom > height) {
          return "outside the viewport";
        }
        // The centre and four points just inside the rounded corners.
        const dx = Math.min(8, r.width / 2);
        const dy = Math.min(8, r.height / 2);
        const points = [[(r.left + r.right) / 2, (r.top + r.bottom) / 2], [r.left + dx, r.top + dy],
                        [r.right - dx, r.top + dy], [r.left + dx, r.bottom - dy], [r.right - dx, r.bottom - dy]];
        if (points.some(([x, y]) => covered(x, y, target))) return "covered";
        if (hasVisibilityObserver && visible.get(target) !== true) return "not visible (IntersectionObserver)";
      }
      return null;
    }
    function tick() {
      if (stopped) return;
      const reason = obstruction();
      // Why the prompt is not armed, for the tests' failure messages (inside the closed shadow root, like data-armed).
      if (reason) box.setAttribute("data-obstruction", reason);
      else box.removeAttribute("data-obstruction");
      if (reason) return reset();
      const now = performance.now();
      const boxes = JSON.stringify(targets().map((t) => {
        const r = t.getBoundingClientRect();
        return [r.left, r.top, r.width, r.height];
      }));
      if (since === null || boxes !== layout) { since = now; layout = boxes; }
      setArmed(now - since >= SETTLE_MS);
    }

    // The host's attributes, and its ancestors' (class, style, hidden...), may change how it is drawn: restore the
    // host's style and start counting again. The host removed or moved: the prompt is gone.
    const mutations = new MutationObserver((records) => {
      if (stopped) return;
      if (!host.isConnected || host.parentNode !== parent) return gone();
      if (records.some((record) => record.type === "attributes")) {
        if (host.getAttribute("style") !== HOST_STYLE) host.setAttribute("style", HOST_STYLE);
        if (!host.hasAttribute("popover")) host.setAttribute("popover", "manual");
        mutations.takeRecords();
        reset();
      }
    });
    mutations.observe(host, { attributes: true });
    for (let node = parent; node; node = node.parentNode) {
      mutations.observe(node, { attributes: node.nodeType === Node.ELEMENT_NODE, childList: true });
    }
    const onToggle = (event) => {
      if (event.target === host && event.newState === "closed") gone();
      else if (event.newState === "open") before.delete(event.target); // shown again: now above ours
    };
    window.addEventListener("toggle", onToggle, true);
    const onWindow = (event) => { if (event.type !== "focus" || event.target === window) reset(); };
    // (visibilitychange and fullscreenchange are fired at the document and bubble to the window.)
    const windowEvents = ["resize", "blur", "focus", "visibilitychange", "fullscreenchange", "pageshow"];
    for (const type of windowEvents) window.addEventListener(type, onWindow);

    let observers = [];
    if (hasVisibilityObserver) {
      observers = targets().map((target) => {
        const observer = new IntersectionObserver((entries) => {
          for (const entry of entries) {
            visible.set(entry.target, entry.isVisible && entry.isIntersecting && entry.intersectionRatio >= 0.99);
          }
          tick();
        }, { trackVisibility: true, delay: 100, threshold: [0, 1] });
        observer.observe(target);
        return observer;
      });
    }
    const timer = setInterval(tick, POLL_MS);

    function stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      mutations.disconnect();
      for (const observer of observers) observer.disconnect();
      window.removeEventListener("toggle", onToggle, true);
      for (const type of windowEvents) window.removeEventListener(type, onWindow);
    }
    function gone() {
      if (stopped) return;
      stop();
      onGone();
    }
    return {
      stop,
      // Whether this trusted event may act: the prompt armed and still unobscured now, and a pointer click on the
      // element that got it (a click made with the keyboard has no point: detail 0).
      allows(event, target) {
        tick();
        if (!armed) return false;
        if (event.detail > 0 && typeof event.clientX === "number" && covered(event.clientX, event.clientY, target)) {
          return false;
        }
        return true;
      },
    };
  }

  // --- UI ---------------------------------------------------------------------------------------------------------

  const STYLE = `
    :host { all: initial; }
    .sheet { position: fixed; top: 16px; inset-inline-end: 16px; width: 340px; max-width: calc(100vw - 32px);
             background: #fff; color: #1d1d1f; border-radius: 12px; box-shadow: 0 10px 40px rgba(0,0,0,.28);
             font: 14px/1.4 system-ui, sans-serif; padding: 16px; z-index: 2147483647; box-sizing: border-box; }
    .brand { font-size: 12px; color: #555; margin-bottom: 6px; display: flex; gap: 6px; align-items: center; }
    .brand b { color: #0a5; }
    h1 { font-size: 16px; margin: 0 0 4px; }
    p { margin: 0 0 12px; color: #333; }
    button { font: inherit; border-radius: 8px; border: 1px solid #c8c8cc; background: #f5f5f7; padding: 8px 10px;
             cursor: pointer; width: 100%; text-align: start; margin-top: 6px; color: inherit; }
    button:focus-visible, button.active { outline: 2px solid #0a66d8; outline-offset: 1px; }
    button.primary { background: #0a66d8; color: #fff; border-color: #0a66d8; text-align: center; }
    button.link { background: none; border: none; color: #0a66d8; padding: 6px 2px; }
    .account .name { font-weight: 600; display: block; }
    .account .sub { font-size: 12px; color: #555; }
    .list { position: fixed; background: #fff; color: #1d1d1f; border-radius: 8px; box-shadow: 0 6px 24px rgba(0,0,0,.25);
            font: 14px/1.4 system-ui, sans-serif; padding: 6px; z-index: 2147483647; box-sizing: border-box;
            min-width: 240px; }
    .list button { margin: 2px 0; border-color: transparent; background: #fff; }
    .list button.active { background: #e8f0fe; }
    .hint { font-size: 11px; color: #666; padding: 4px 6px 2px; }
  `;

  // The host: a manual popover in the top layer with a locked inline style, a child of <html> (so its only
  // ancestor is the root element), its content in a closed shadow root made from this world.
  function mount() {
    const host = document.createElement("sesame-keychain");
    host.setAttribute("style", HOST_STYLE);
    host.setAttribute("popover", "manual");
    const root = host.attachShadow({ mode: "closed" });
    const style = document.createElement("style");
    style.textContent = STYLE;
    root.append(style);
    document.documentElement.append(host);
    try {
      host.showPopover();
    } catch {
      // No popover support: the host is still fixed above the page's z-indexes, and the checks above still apply.
    }
    return { host, root, remove: () => host.remove() };
  }
  function element(tag, props = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === "className") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    node.append(...children);
    return node;
  }
  function accountButton(account) {
    return element("button", { className: "account", type: "button" }, [
      element("span", { className: "name", text: account.userName || t("extension.relay.no-user-name") }),
      element("span", { className: "sub", text: account.displayName
        ? t("extension.relay.passkey-sub-named", { name: account.displayName }) : t("extension.relay.passkey-sub") }),
    ]);
  }
  // A handler for trusted input only; with `gate` (a function returning the prompt's guard), only once the guard
  // allows it (the prompt armed: shown, unobscured and unmoved for SETTLE_MS).
  function trusted(handler, gate) {
    return (event) => {
      if (!event.isTrusted) return;
      event.preventDefault();
      event.stopPropagation();
      const protection = gate && gate();
      if (gate && !(protection && protection.allows(event, event.currentTarget))) return;
      handler(event);
    };
  }

  // The modal prompt: which site, which account; confirm, cancel, or hand back to the browser. Picking, confirming
  // and the hand-back wait for the guard; Cancel and Escape never do. The host removed, moved or hidden by the
  // page while it is open is a Cancel.
  function sheet({ title, detail, accounts, confirm, onPick, onConfirm, onOther, onCancel, cancelText }) {
    const mounted = mount();
    const { root, remove, host } = mounted;
    let protection = null;
    const gate = () => protection;
    const box = element("div", { className: "sheet", role: "dialog", "aria-modal": "true", "aria-label": title,
                                 dir: DIRECTION });
    box.append(element("div", { className: "brand" }, [element("b", { text: "●" }), t("extension.manifest.name")]),
               element("h1", { text: title }), element("p", { text: detail }));
    const buttons = [];
    for (const account of accounts || []) {
      const button = accountButton(account);
      button.dataset.credentialId = account.credentialId;
      button.addEventListener("click", trusted(() => onPick(account), gate));
      box.append(button);
      buttons.push(button);
    }
    if (confirm) {
      const button = element("button", { className: "primary", type: "button", text: confirm });
      button.addEventListener("click", trusted(() => onConfirm(), gate));
      box.append(button);
      buttons.push(button);
    }
    let other = null;
    if (onOther) {
      other = element("button", { className: "link", type: "button", text: t("extension.relay.other-device") });
      other.addEventListener("click", trusted(() => onOther(), gate));
      box.append(other);
    }
    const cancel = element("button", { className: "link", type: "button", text: cancelText || t("extension.relay.cancel") });
    cancel.addEventListener("click", trusted(() => onCancel()));
    box.append(cancel);
    box.addEventListener("keydown", (event) => {
      if (event.isTrusted && event.key === "Escape") { event.preventDefault(); onCancel(); }
    });
    root.append(box);
    const actionable = other ? [...buttons, other] : buttons;
    let closed = false;
    const trap = (event) => {
      if (event.target !== host) setTimeout(() => first.isConnected && first.focus(), 0);
    };
    const close = () => {
      if (closed) return;
      closed = true;
      protection.stop();
      window.removeEventListener("focusin", trap, true);
      remove();
    };
    protection = guard({ host, root, box, targets: () => actionable, onGone: () => onCancel() });
    const first = buttons[0] || other || cancel;
    first.focus();
    // A modal prompt keeps the keyboard focus while it is open (the page may move it, e.g. to its own field).
    window.addEventListener("focusin", trap, true);
    return {
      close,
      busy: () => { for (const b of box.querySelectorAll("button")) b.disabled = true; },
    };
  }

  // AutoFill: suggestions under any field whose autocomplete tokens include "webauthn".
  function isWebAuthnField(node) {
    if (!(node instanceof HTMLInputElement)) return false;
    const tokens = (node.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    return tokens.includes("webauthn");
  }
  // The list's host removed, moved or hidden by the page while it shows ends the list and calls `onGone` (for
  // passkeys, a NotAllowedError as a cancelled request). A pick (click, or Enter on a highlighted suggestion)
  // waits for the guard.
  function autofill(rpId, accounts, pick, { matches = isWebAuthnField, render = accountButton,
                                            label = t("extension.relay.passkeys-label", { site: rpId }),
                                            onGone = () => {} } = {}) {
    let open = null; // { remove, buttons, field, active, guard }
    let finished = false;
    const close = () => {
      if (!open) return;
      open.guard.stop();
      open.remove();
      open = null;
    };
    const choose = (account) => {
      if (finished) return;
      finished = true;
      close();
      stop();
      pick(account);
    };
    const show = (field) => {
      close();
      const { root, remove, host } = mount();
      const rect = field.getBoundingClientRect();
      const list = element("div", { className: "list", role: "listbox", "aria-label": label, dir: DIRECTION });
      list.style.left = `${Math.max(4, rect.left)}px`;
      list.style.top = `${rect.bottom + 4}px`;
      list.style.width = `${Math.max(240, rect.width)}px`;
      const shown = {};
      const buttons = accounts.map((account) => {
        const button = render(account);
        button.setAttribute("role", "option");
        // Keep the field focused while the pointer is down, then pick on the click.
        button.addEventListener("mousedown", (event) => event.preventDefault());
        button.addEventListener("click", trusted(() => choose(account), () => shown.guard));
        list.append(button);
        return button;
      });
      list.append(element("div", { className: "hint", text: t("extension.manifest.name") }));
      root.append(list);
      // The whole list inside the viewport (the guard arms only fully visible suggestions): above the field when
      // there is no room under it, and never past the right edge.
      const viewWidth = document.documentElement.clientWidth || window.innerWidth;
      const viewHeight = document.documentElement.clientHeight || window.innerHeight;
      const size = list.getBoundingClientRect();
      if (rect.bottom + 4 + size.height > viewHeight - 4) {
        list.style.top = `${Math.max(4, Math.min(rect.top - 4 - size.height, viewHeight - 4 - size.height))}px`;
      }
      if (size.right > viewWidth - 4) list.style.left = `${Math.max(4, viewWidth - 4 - size.width)}px`;
      shown.guard = guard({
        host, root, box: list, targets: () => buttons,
        onGone: () => {
          if (open === shown) { remove(); open = null; }
          if (finished) return;
          finished = true;
          stop();
          onGone();
        },
      });
      open = Object.assign(shown, { remove, buttons, field, active: -1 });
    };
    const highlight = (index) => {
      open.active = index;
      open.buttons.forEach((b, i) => b.classList.toggle("active", i === index));
    };
    const onFocus = (event) => {
      if (event.isTrusted && matches(event.target) && personIsActive()) show(event.target);
    };
    // A click on the field the page focused by script (which showed nothing) offers the suggestions.
    const onClick = (event) => {
      if (event.isTrusted && !open && matches(event.target) && event.target === document.activeElement) {
        show(event.target);
      }
    };
    const onBlur = (event) => { if (open && event.target === open.field) close(); };
    // Capture on window, registered before any page script: Enter on a highlighted suggestion picks it and does
    // not reach the page (which would submit its form).
    const onKey = (event) => {
      if (!event.isTrusted || !open || event.target !== open.field) return;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        event.stopImmediatePropagation();
        const n = open.buttons.length;
        highlight(event.key === "ArrowDown" ? (open.active + 1) % n : (open.active - 1 + n) % n);
      } else if (event.key === "Enter" && open.active >= 0) {
        event.preventDefault();
        event.stopImmediatePropagation();
        if (open.guard.allows(event, open.buttons[open.active])) choose(accounts[open.active]);
      } else if (event.key === "Escape") {
        close();
      }
    };
    window.addEventListener("focusin", onFocus, true);
    window.addEventListener("click", onClick, true);
    window.addEventListener("focusout", onBlur, true);
    window.addEventListener("keydown", onKey, true);
    const stop = () => {
      window.removeEventListener("focusin", onFocus, true);
      window.removeEventListener("click", onClick, true);
      window.removeEventListener("focusout", onBlur, true);
      window.removeEventListener("keydown", onKey, true);
    };
    // A field already focused when the request starts gets its suggestions now, if the person is at the page.
    if (matches(document.activeElement) && personIsActive()) show(document.activeElement);
    return { close: () => { finished = true; close(); stop(); } };
  }
})();
