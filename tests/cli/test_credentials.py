"""No line of the CLI carries a credential (issue 29, defect 7): a tool's exception, a DSN given
without `--db`, a password holding an unencoded `/`."""

from __future__ import annotations

from pathlib import Path

from .test_cli_subprocess import AGENTS, clean_env, hookline

SECRET = "hunter2-pw"


def test_a_tools_exception_is_redacted_on_stderr_in_the_log_and_in_sessions_show(tmp_path: Path) -> None:
    ran = hookline("run", "connect", "--agent", f"{AGENTS}:leaky", "--session", "s1", "--db", "s.db",
                   env=clean_env(), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "connect failed: RuntimeError: cannot connect with password=*** to the warehouse" in ran.stderr
    assert "connect failed: connect failed" not in ran.stderr, "the status line says it once"
    shown = hookline("sessions", "show", "s1", "--db", "s.db", env=clean_env(), cwd=tmp_path)
    exported = hookline("sessions", "export", "s1", "--db", "s.db", env=clean_env(), cwd=tmp_path)
    for done in (ran, shown, exported):
        assert SECRET not in done.stdout + done.stderr
    assert "password=***" in shown.stdout


def test_a_dsn_given_without_db_is_redacted_in_the_usage_error(tmp_path: Path) -> None:
    done = hookline("sessions", "list", f"postgresql://app:{SECRET}@127.0.0.1:5432/x", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 2
    assert "Got unexpected extra argument(s) (postgresql://***@127.0.0.1:5432/x)" in done.stderr
    assert SECRET not in done.stderr


def test_a_password_with_an_unencoded_slash_is_refused_without_quoting_it(tmp_path: Path) -> None:
    for password in ("hunter/2-pw", "hunter?2-pw"):
        done = hookline("sessions", "list", "--db", f"postgresql://app:{password}@127.0.0.1:5432/x",
                        env=clean_env(), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "not percent-encoded" in done.stderr
        assert "2-pw" not in done.stderr
        assert "hunter" not in done.stderr
