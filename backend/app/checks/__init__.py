"""Health checks: a suite run over N hosts, each host judged PASS, FAIL, DISTURBED or NO BASELINE against the
expected bands (app.bands); the host's latest verdict, its report, its webhook (docs/methodology/verdicts.md)."""
