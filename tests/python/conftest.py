import pytest

import tensorplay as tp


@pytest.fixture
def restore_threads():
    """Puts the intra-op thread count back after a test that changes it."""
    before = tp.get_num_threads()
    yield
    tp.set_num_threads(before)


@pytest.fixture
def streamed_from_1_mib():
    """Lowers the bound from which the SIMD kernels write outputs past the cache (64 MiB a call) to
    1 MiB, so that a tensor of a few MB reaches that code on each of two threads; puts it back."""
    before = tp._C._set_streamed_bytes(1 << 20)
    yield
    tp._C._set_streamed_bytes(before)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """Makes pytest's failure summary linear in the number of reports.

    For each failed test, pytest's terminal reporter scans every passed setup/teardown report for
    that test's teardown output (TerminalReporter._get_teardown_reports). test_ops.py has thousands of
    cases; with a few hundred failures that scan alone took minutes. This indexes the reports once.
    """
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not hasattr(reporter, "_get_teardown_reports"):
        return
    index = {"size": -1, "by_id": {}}

    def teardown_reports(node_id):
        reports = reporter.getreports("") if index["size"] != len(reporter.stats.get("", ())) else None
        if reports is not None:
            by_id = {}
            for report in reports:
                if report.when == "teardown":
                    by_id.setdefault(report.id, []).append(report)
            index.update(size=len(reporter.stats.get("", ())), by_id=by_id)
        return index["by_id"].get(node_id, [])

    reporter._get_teardown_reports = teardown_reports
