// The consent, sign-out and device pages work without script (plain forms); this only puts the focus on the first
// choice (or the code field).

const first =
  document.getElementById("consent-allow") ||
  document.getElementById("logout-confirm") ||
  document.getElementById("device-allow") ||
  document.getElementById("user-code");
if (first) first.focus();
