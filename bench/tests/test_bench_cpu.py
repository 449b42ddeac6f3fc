"""bench cpu's choice of hpcc's BLAS kernels (pure logic: OpenBLAS's own report is stubbed)."""
from hostbench_bench import cpu


def test_inherited_kernel_overrides_are_dropped_and_named(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setattr(cpu, "openblas_core", lambda blas, env: env.get("OPENBLAS_CORETYPE", "Cooperlake"))
    env, text = cpu.hpl_blas_env("/lib/libblas.so.3", "avx512")
    assert "OPENBLAS_CORETYPE" not in env and env["OPENBLAS_NUM_THREADS"] == "1"
    assert "core Cooperlake" in text and "inherited OPENBLAS_CORETYPE=Haswell" in text


def test_an_openblas_older_than_the_cpu_gets_its_avx512_kernels_where_ours_run_avx512(monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.setattr(cpu, "openblas_core", lambda blas, env: env.get("OPENBLAS_CORETYPE", "Zen"))
    env, text = cpu.hpl_blas_env("/lib/libblas.so.3", "avx512")
    assert env["OPENBLAS_CORETYPE"] == "SkylakeX" and "it detected Zen" in text
    env, text = cpu.hpl_blas_env("/lib/libblas.so.3", "avx2")  # our kernel on AVX2: theirs as detected
    assert "OPENBLAS_CORETYPE" not in env and "core Zen (detected" in text


def test_a_blas_that_is_not_openblas_is_named_only(monkeypatch):
    monkeypatch.setattr(cpu, "openblas_core", lambda blas, env: None)
    env, text = cpu.hpl_blas_env("/lib/refblas.so.3", "avx512")
    assert text == "BLAS /lib/refblas.so.3" and "OPENBLAS_CORETYPE" not in env

