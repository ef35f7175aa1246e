"""schemathesis against the OpenAPI document a running `sesame serve` serves: its examples, coverage and fuzzing
phases, without and with a session. No 5xx, no answer outside the document. On SQLite, and on PostgreSQL when
SESAME_TEST_POSTGRES_URL is set. Its stateful phase is in test_schemathesis_links.py. Files of their own, which
conftest.py hands to scripts/test's workers first: they are the longest, and run beside everything else."""

import shutil
import subprocess

import pytest

from test_server import new_user, server, sign_in  # noqa: F401 (server is a fixture)

SCHEMATHESIS_CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance"


@pytest.mark.skipif(shutil.which("schemathesis") is None, reason="schemathesis is not installed (Tests/Interop/requirements.txt)")
def test_schemathesis_finds_no_server_errors_or_schema_violations(server):
    name, password = new_user(server)
    token = sign_in(server, name, password)["sessionToken"]
    for headers in ([], ["-H", "Authorization: Bearer " + token]):
        result = subprocess.run(
            ["schemathesis", "run", server.base + "/openapi.yaml", "--url", server.base, "--checks", SCHEMATHESIS_CHECKS,
             "--phases", "examples,coverage,fuzzing", "--max-examples", "25", "--no-color", *headers],
            capture_output=True, text=True, timeout=600, cwd=server.log_path.parent,  # its cache stays out of the tree
        )
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "request failed" not in server.log_path.read_text()
