// Account page, the verification codes card (SesameSecondFactors): setting up an authenticator app (QR image,
// Apple's link, the key typed), confirming its first code, turning codes off.

import { call } from "./api.js";
import { $, say, clear, busy, focus, show } from "./ui.js";
import { t } from "./i18n.js";
import { section, loadAccount, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  totpStart: () => call("POST", "/api/account/totp", {}),
  totpConfirm: (code) => call("POST", "/api/account/totp/confirm", { code }),
  totpDisable: () => call("DELETE", "/api/account/totp"),
};

function render(account) {
  const factors = account.secondFactors || [];
  const totpOn = factors.includes("totp");
  $("totp-status").textContent = totpOn
    ? t("web.account.totp.on")
    : t("web.account.totp.off");
  show($("totp-start"), !totpOn);
  show($("totp-disable"), totpOn);
}

function groupSecret(secret) {
  return (secret || "").replace(/(.{4})(?=.)/g, "$1 ");
}

async function startTOTP() {
  clear();
  await busy($("totp-start"), async () => {
    try {
      const setup = await endpoints.totpStart();
      const uri = setup.otpauthURI;
      const apple = setup.appleOtpauthURI;
      const qr = setup.qrCodeURL;
      $("totp-secret").textContent = groupSecret(setup.secret);
      $("totp-uri").textContent = uri || "";
      if (typeof qr === "string" && qr.startsWith("/") && !qr.startsWith("//")) $("totp-qr").src = `${qr}${qr.includes("?") ? "&" : "?"}t=${Date.now()}`;
      if (typeof apple === "string" && apple.startsWith("apple-otpauth:")) $("totp-apple").href = apple;
      show($("totp-apple").parentElement, typeof apple === "string");
      show($("totp-setup"), true);
      say(t("web.account.totp.started"), "info");
      focus($("totp-code"));
    } catch (error) {
      failed(error);
    }
  });
}

async function confirmTOTP(event) {
  event.preventDefault();
  const code = $("totp-code").value.replace(/\s+/g, "");
  if (!/^[0-9]{6,8}$/.test(code)) {
    say(t("web.account.totp.code-invalid"), "error");
    return focus($("totp-code"));
  }
  await busy(event.submitter, async () => {
    try {
      await endpoints.totpConfirm(code);
      $("totp-code").value = "";
      show($("totp-setup"), false);
      await loadAccount();
      say(t("web.account.totp.enabled"), "success");
      focus($("totp-heading"));
    } catch (error) {
      failed(error);
      focus($("totp-code"));
    }
  });
}

async function disableTOTP() {
  await busy($("totp-disable"), async () => {
    try {
      await endpoints.totpDisable();
      await loadAccount();
      say(t("web.account.totp.disabled"), "success");
    } catch (error) {
      failed(error);
    }
  });
}

function wire() {
  $("totp-start").addEventListener("click", startTOTP);
  $("totp-confirm-form").addEventListener("submit", confirmTOTP);
  $("totp-disable").addEventListener("click", disableTOTP);
}

section({ name: "totp", anchor: "totp", wire, render });
