"""Report formats through the CLI, on the compiled simulator: RTCP RR + XR refuses a
controller that reads per-packet arrival times."""

from __future__ import annotations

from pathlib import Path

from conftest import one_line_error, requires_native, run_main

pytestmark = requires_native


def test_rtcp_xr_refuses_a_controller_that_reads_arrivals(capsys, tmp_path: Path):
    # RR + XR carry no per-packet arrival times; gcc reads them.
    bad = tmp_path / "xr.toml"
    bad.write_text('duration = "2s"\n[link]\ncapacity = "1Mbps"\n[[flow]]\ncontroller = "gcc"\n'
                   'report_format = "rtcp-xr"\n')  # fmt: skip
    code, _, err = run_main(capsys, "run", bad, "--out", tmp_path / "o")
    one_line_error(code, err, str(bad), "flow[0].report_format", "arrival times", "'gcc'")
    assert not (tmp_path / "o").exists()
    ok = tmp_path / "fbra.toml"
    ok.write_text(bad.read_text().replace('"gcc"', '"fbra"'))
    code, _, err = run_main(capsys, "validate", ok)
    assert code == 0, err
