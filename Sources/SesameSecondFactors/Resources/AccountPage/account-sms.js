// Account page, the SMS card (SesameSecondFactors): a phone number for codes by text message, confirmed by its
// first code, and removing it.

import { call } from "./api.js";
import { $, say, busy, focus, show } from "./ui.js";
import { t } from "./i18n.js";
import { section, loadAccount, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  smsStart: (phone) => call("PUT", "/api/account/sms", { phone }),
  smsConfirm: (code) => call("POST", "/api/account/sms/confirm", { code }),
  smsRemove: () => call("DELETE", "/api/account/sms"),
};

function render(account) {
  const factors = account.secondFactors || [];
  const smsOn = factors.includes("sms");
  $("sms-status").textContent = smsOn
    ? t("web.account.sms.on")
    : t("web.account.sms.off");
  show($("sms-remove"), smsOn);
}

async function startSMS(event) {
  event.preventDefault();
  const phone = $("sms-phone").value.replace(/[\s()-]/g, "");
  if (!/^\+[1-9][0-9]{6,14}$/.test(phone)) {
    say(t("web.account.sms.phone-invalid"), "error");
    return focus($("sms-phone"));
  }
  await busy(event.submitter, async () => {
    try {
      await endpoints.smsStart(phone);
      show($("sms-confirm-form"), true);
      say(t("web.account.sms.sent"), "info");
      focus($("sms-code"));
    } catch (error) {
      failed(error);
    }
  });
}

async function confirmSMS(event) {
  event.preventDefault();
  const code = $("sms-code").value.trim();
  await busy(event.submitter, async () => {
    try {
      await endpoints.smsConfirm(code);
      show($("sms-confirm-form"), false);
      $("sms-code").value = "";
      await loadAccount();
      say(t("web.account.sms.confirmed"), "success");
    } catch (error) {
      failed(error);
      focus($("sms-code"));
    }
  });
}

async function removeSMS() {
  await busy($("sms-remove"), async () => {
    try {
      await endpoints.smsRemove();
      await loadAccount();
      say(t("web.account.sms.removed"), "success");
    } catch (error) {
      failed(error);
    }
  });
}

function wire() {
  $("sms-form").addEventListener("submit", startSMS);
  $("sms-confirm-form").addEventListener("submit", confirmSMS);
  $("sms-remove").addEventListener("click", removeSMS);
}

section({ name: "sms", anchor: "sms", wire, render });
