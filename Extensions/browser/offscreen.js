// Sesame Keychain: the offscreen document (Chromium) that clears the clipboard for the service worker, which has no
// clipboard of its own. It answers one message kind and exits when the worker closes it.
"use strict";

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || !message || message.target !== "offscreen") return false;
  if (message.kind === "clearClipboard") {
    const clear = (event) => {
      event.clipboardData.setData("text/plain", "");
      event.preventDefault();
    };
    document.addEventListener("copy", clear, { once: true });
    const done = document.execCommand("copy");
    sendResponse({ result: { cleared: done } });
  }
  return false;
});
