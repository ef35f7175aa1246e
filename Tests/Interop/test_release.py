"""scripts/release packaging (issue 18): the tarball holds the binary, the docs, the example configuration and the
systemd unit, its SHA-256 sum checks, the binary in it says the CHANGELOG's version, the same binary packs to the
same bytes, and a binary that links the Swift runtime dynamically is refused unless the caller says it is only
checking the packaging. The release build itself (`swift build -c release --static-swift-stdlib`) is too slow for
every test run; docs/deploy.md reports when it was last run and the size it gave."""

import hashlib
import os
import re
import subprocess
import tarfile

from conftest import ROOT
from test_operations import changelog_version

SCRIPT = ROOT / "scripts" / "release"


def release(*args):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)


def stand_in(tmp_path, said):
    """A small executable that answers --version like sesame (the debug binary is 170 MB: packing it is slow)."""
    path = tmp_path / "stand-in" / "sesame"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{said}'\n")
    path.chmod(0o755)
    # A resource bundle beside it, as SwiftPM leaves one per server target that has resources.
    page = path.parent / "sesame_SesameWeb.resources" / "Resources" / "Web" / "signin.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<!doctype html>\n")
    return path


def test_release_packages_the_binary_docs_and_configuration(tmp_path):
    version = changelog_version()
    binary = stand_in(tmp_path, f"{version} (commit 0123456789abcdef0123456789abcdef01234567)")
    result = release("--bin", binary, "--out", tmp_path / "a")
    assert result.returncode == 0, result.stderr
    import platform

    name = f"sesame-{version}-linux-{platform.machine()}"
    tarball = tmp_path / "a" / f"{name}.tar.gz"
    sums = (tmp_path / "a" / "SHA256SUMS").read_text()
    assert sums == f"{hashlib.sha256(tarball.read_bytes()).hexdigest()}  {name}.tar.gz\n"
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "a", capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    with tarfile.open(tarball) as archive:
        members = {member.name: member for member in archive.getmembers()}
        for path in ["bin/sesame", "LICENSE", "NOTICE", "README.md", "CHANGELOG.md", "VERSION", "docs/deploy.md",
                     "docs/backup.md", "docs/configuration.md", "contrib/systemd/sesame.service",
                     "contrib/config/sesame.json"]:
            assert f"{name}/{path}" in members, path
        assert all(member.name.startswith(name + "/") or member.name == name for member in members.values())
        assert all(member.uid == 0 and member.gid == 0 for member in members.values())
        assert members[f"{name}/bin/sesame"].mode == 0o755
        # The resources go beside the binary, where it looks for them first.
        assert f"{name}/bin/sesame_SesameWeb.resources/Resources/Web/signin.html" in members
        assert members[f"{name}/docs/deploy.md"].mode == 0o644
        archive.extractall(tmp_path / "x", filter="data")
    said = subprocess.run([tmp_path / "x" / name / "bin" / "sesame", "--version"], capture_output=True, text=True)
    assert re.match(rf"{re.escape(version)} \(commit ", said.stdout), said.stdout
    assert (tmp_path / "x" / name / "VERSION").read_text() == said.stdout

    # Reproducible: the same binary from the same commit packs to the same bytes.
    again = release("--bin", binary, "--out", tmp_path / "b")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "b" / "SHA256SUMS").read_text() == sums


def test_release_refuses_a_binary_with_a_dynamic_swift_runtime(sesame_bin, tmp_path):
    linked = subprocess.run(["ldd", sesame_bin], capture_output=True, text=True).stdout
    assert "libswiftCore" in linked, "the debug build is expected to link the runtime dynamically"
    result = release("--bin", sesame_bin, "--out", tmp_path / "out")
    assert result.returncode == 1 and "--static-swift-stdlib" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_release_refuses_a_binary_of_another_version(tmp_path):
    result = release("--bin", stand_in(tmp_path, "0.0.1 (commit unknown)"), "--out", tmp_path / "out")
    assert result.returncode == 1 and "CHANGELOG.md says" in result.stderr, result.stderr


def test_release_refuses_a_binary_without_its_resource_bundles(tmp_path):
    binary = stand_in(tmp_path, f"{changelog_version()} (commit 0123456789abcdef0123456789abcdef01234567)")
    import shutil

    shutil.rmtree(binary.parent / "sesame_SesameWeb.resources")
    result = release("--bin", binary, "--out", tmp_path / "a")
    assert result.returncode != 0 and "no resource bundles" in result.stderr, result.stderr

