// The consent and sign-out pages work without script (plain forms); this only puts the focus on the first choice.

const allow = document.getElementById("consent-allow") || document.getElementById("logout-confirm");
if (allow) allow.focus();
