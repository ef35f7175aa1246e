// Account page, the email address card (SesameEmail): adding, confirming, changing and removing the address. On a
// server without addresses the card stays hidden.

import { call } from "./api.js";
import { $, say, busy, focus, show } from "./ui.js";
import { t } from "./i18n.js";
import { section, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  emailShow: () => call("GET", "/api/account/email"),
  emailStart: (address) => call("PUT", "/api/account/email", { address }),
  emailConfirm: (code) => call("POST", "/api/account/email/confirm", { code }),
  emailRemove: () => call("DELETE", "/api/account/email"),
};

let email = null;

async function loadEmail() {
  try {
    email = await endpoints.emailShow();
  } catch (error) {
    // Addresses are off on this server (email_not_enabled): the section stays hidden.
    email = null;
    if (error && error.code !== "email_not_enabled") failed(error);
  }
  show($("email"), email !== null);
  if (!email) return;
  let status;
  if (email.address && email.pending) {
    status = t("web.account.email.status-changing", { address: email.address, pending: email.pending });
  } else if (email.address) {
    status = t("web.account.email.status-confirmed", { address: email.address });
  } else if (email.pending) {
    status = t("web.account.email.status-pending", { pending: email.pending });
  } else {
    status = email.setting === "required"
      ? t("web.account.email.status-required")
      : t("web.account.email.status-none");
  }
  $("email-status").textContent = status;
  $("email-submit").textContent = email.address ? t("web.account.email.change") : t("web.account.email.send");
  show($("email-confirm-form"), Boolean(email.pending));
  show($("email-remove"), Boolean(email.address || email.pending) && !(email.setting === "required" && email.address));
}

async function startEmail(event) {
  event.preventDefault();
  const address = $("email-address").value.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) {
    say(t("web.account.email.invalid"), "error");
    return focus($("email-address"));
  }
  await busy(event.submitter, async () => {
    try {
      await endpoints.emailStart(address);
      $("email-address").value = "";
      await loadEmail();
      say(t("web.account.email.sent"), "info");
      focus($("email-code"));
    } catch (error) {
      failed(error);
      focus($("email-address"));
    }
  });
}

async function confirmEmail(event) {
  event.preventDefault();
  const code = $("email-code").value.trim();
  await busy(event.submitter, async () => {
    try {
      const verified = await endpoints.emailConfirm(code);
      $("email-code").value = "";
      await loadEmail();
      say(t("web.account.email.confirmed", { address: verified.address }), "success");
    } catch (error) {
      failed(error);
      focus($("email-code"));
    }
  });
}

async function removeEmail() {
  await busy($("email-remove"), async () => {
    try {
      await endpoints.emailRemove();
      await loadEmail();
      say(t("web.account.email.removed"), "success");
    } catch (error) {
      failed(error);
    }
  });
}

function wire() {
  $("email-form").addEventListener("submit", startEmail);
  $("email-confirm-form").addEventListener("submit", confirmEmail);
  $("email-remove").addEventListener("click", removeEmail);
}

section({ name: "email", anchor: "email", wire, load: loadEmail });
