// Dense linear algebra through LAPACK and BLAS, from OpenBLAS's OpenMP build (so its threads are
// our OpenMP pool). Each matrix of a batch is one call: OpenBLAS parallelises inside a call, and
// the ops' matrices are column-major as Fortran reads them (dispatch/backend.h).

#include <algorithm>
#include <climits>
#include <complex>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "tensorplay/cpu/backend.h"

// LAPACK's and BLAS's Fortran interface: every argument by pointer, 32-bit integers (OpenBLAS's
// default build), and the length of each character argument passed last, as gfortran does.
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t trans_len);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t trans_len);
void ssytrf_(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work, const int* lwork,
             int* info, size_t uplo_len);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work, const int* lwork,
             int* info, size_t uplo_len);
void ssytrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv, float* b,
             const int* ldb, int* info, size_t uplo_len);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t uplo_len);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const float* alpha, const float* a, const int* lda, float* b, const int* ldb, size_t, size_t, size_t,
            size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, size_t, size_t, size_t,
            size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             size_t jobz_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t jobz_len);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<float>* a, const int* lda,
            std::complex<float>* w, std::complex<float>* vl, const int* ldvl, std::complex<float>* vr, const int* ldvr,
            std::complex<float>* work, const int* lwork, float* rwork, int* info, size_t jobvl_len, size_t jobvr_len);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a, const int* lda,
            std::complex<double>* w, std::complex<double>* vl, const int* ldvl, std::complex<double>* vr,
            const int* ldvr, std::complex<double>* work, const int* lwork, double* rwork, int* info, size_t jobvl_len,
            size_t jobvr_len);
}

namespace tp::cpu {

namespace {

// The routines of one precision, picked by T.
template <class T>
struct Lapack;

template <>
struct Lapack<float> {
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getrs = sgetrs_;
  static constexpr auto sytrf = ssytrf_;
  static constexpr auto sytrs = ssytrs_;
  static constexpr auto potrf = spotrf_;
  static constexpr auto trsm = strsm_;
  static constexpr auto geqrf = sgeqrf_;
  static constexpr auto orgqr = sorgqr_;
  static constexpr auto gesdd = sgesdd_;
  static constexpr auto syevd = ssyevd_;
  static constexpr auto geev = sgeev_;
  static constexpr auto complex_geev = cgeev_;
};

template <>
struct Lapack<double> {
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getrs = dgetrs_;
  static constexpr auto sytrf = dsytrf_;
  static constexpr auto sytrs = dsytrs_;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto trsm = dtrsm_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto orgqr = dorgqr_;
  static constexpr auto gesdd = dgesdd_;
  static constexpr auto syevd = dsyevd_;
  static constexpr auto geev = dgeev_;
  static constexpr auto complex_geev = zgeev_;
};

int fortran_int(const char* op, int64_t n) {
  TP_CHECK(n <= INT_MAX, "[", op, "] a matrix dimension of ", n, " is more than LAPACK's 32-bit integers hold");
  return static_cast<int>(n);
}

// Runs f(T{}) for float32 and float64, the precisions LAPACK has.
template <class F>
void with_lapack_dtype(const char* op, ScalarType dtype, const F& f) {
  visit_dtype<DTypes::Floating>(op, dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      f(t);
    else
      fail_unsupported_dtype(op, dtype);
  });
}

template <class T>
T* matrix(const Tensor& t, int64_t i) {
  return static_cast<T*>(t.data_ptr()) + i * t.size(1) * t.size(2);
}

template <class T>
T* row(const Tensor& t, int64_t i) {
  return static_cast<T*>(t.data_ptr()) + i * t.size(1);
}

// A workspace of the size LAPACK asked for in a query call (lwork = -1), which returns it as a
// floating-point number in the first element.
template <class T>
std::vector<T> workspace(T asked) {
  return std::vector<T>(std::max<size_t>(1, static_cast<size_t>(asked)));
}

}  // namespace

void CpuBackend::lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  const int m = fortran_int("lu_factor", a.size(1)), n = fortran_int("lu_factor", a.size(2));
  const int lda = m > 0 ? m : 1;
  with_lapack_dtype("lu_factor", a.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::getrf(&m, &n, matrix<T>(a, i), &lda, static_cast<int*>(pivots.data_ptr()) + i * pivots.size(1),
                       static_cast<int*>(info.data_ptr()) + i);
  });
}

void CpuBackend::lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose) {
  const int n = fortran_int("lu_solve", b.size(1)), k = fortran_int("lu_solve", b.size(2));
  const int ld = n > 0 ? n : 1;
  const char trans = transpose ? 'T' : 'N';
  with_lapack_dtype("lu_solve", b.dtype(), [&](auto t) {
    using T = decltype(t);
    int info = 0;  // only argument errors, which the op's checks rule out
    for (int64_t i = 0; i < b.size(0); ++i)
      Lapack<T>::getrs(&trans, &n, &k, matrix<T>(lu, i), &ld, static_cast<const int*>(pivots.data_ptr()) + i * n,
                       matrix<T>(b, i), &ld, &info, 1);
  });
}

void CpuBackend::ldl_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  const int n = fortran_int("linalg.ldl_factor", a.size(1));
  const int lda = n > 0 ? n : 1;
  const char uplo = 'L';
  with_lapack_dtype("linalg.ldl_factor", a.dtype(), [&](auto t) {
    using T = decltype(t);
    int query = -1, query_info = 0;
    T asked = 0;
    Lapack<T>::sytrf(&uplo, &n, nullptr, &lda, nullptr, &asked, &query, &query_info, 1);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::sytrf(&uplo, &n, matrix<T>(a, i), &lda, static_cast<int*>(pivots.data_ptr()) + i * n, work.data(),
                       &lwork, static_cast<int*>(info.data_ptr()) + i, 1);
  });
}

void CpuBackend::ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b) {
  const int n = fortran_int("linalg.ldl_solve", b.size(1)), k = fortran_int("linalg.ldl_solve", b.size(2));
  const int lda = n > 0 ? n : 1;
  const char uplo = 'L';
  with_lapack_dtype("linalg.ldl_solve", b.dtype(), [&](auto t) {
    using T = decltype(t);
    int info = 0;  // only argument errors, which the op's checks rule out
    for (int64_t i = 0; i < b.size(0); ++i)
      Lapack<T>::sytrs(&uplo, &n, &k, matrix<T>(ld, i), &lda, static_cast<const int*>(pivots.data_ptr()) + i * n,
                       matrix<T>(b, i), &lda, &info, 1);
  });
}

void CpuBackend::cholesky(const Tensor& a, const Tensor& info, bool upper) {
  const int n = fortran_int("cholesky", a.size(1));
  const int lda = n > 0 ? n : 1;
  const char uplo = upper ? 'U' : 'L';
  with_lapack_dtype("cholesky", a.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t i = 0; i < a.size(0); ++i) {
      int* code = static_cast<int*>(info.data_ptr()) + i;
      Lapack<T>::potrf(&uplo, &n, matrix<T>(a, i), &lda, code, 1);
      // Reference LAPACK stops at a diagonal that is not positive or is NaN; OpenBLAS's own potrf
      // lets a NaN through, so the factor's diagonal is checked here.
      for (int j = 0; *code == 0 && j < n; ++j)
        if (!(matrix<T>(a, i)[j * (n + 1)] > 0)) *code = j + 1;
    }
  });
}

void CpuBackend::triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool transpose, bool unitriangular) {
  const int n = fortran_int("triangular_solve", b.size(1)), k = fortran_int("triangular_solve", b.size(2));
  const int ld = n > 0 ? n : 1;
  const char side = 'L', uplo = upper ? 'U' : 'L', trans = transpose ? 'T' : 'N', diag = unitriangular ? 'U' : 'N';
  with_lapack_dtype("triangular_solve", b.dtype(), [&](auto t) {
    using T = decltype(t);
    const T one = 1;
    for (int64_t i = 0; i < b.size(0); ++i)
      Lapack<T>::trsm(&side, &uplo, &trans, &diag, &n, &k, &one, matrix<T>(a, i), &ld, matrix<T>(b, i), &ld, 1, 1, 1,
                      1);
  });
}

void CpuBackend::qr_factor(const Tensor& a, const Tensor& tau) {
  const int m = fortran_int("geqrf", a.size(1)), n = fortran_int("geqrf", a.size(2));
  const int lda = m > 0 ? m : 1;
  with_lapack_dtype("geqrf", a.dtype(), [&](auto t) {
    using T = decltype(t);
    int info = 0, query = -1;  // no failures but argument errors, which the op's checks rule out
    T asked = 0;
    Lapack<T>::geqrf(&m, &n, nullptr, &lda, nullptr, &asked, &query, &info);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::geqrf(&m, &n, matrix<T>(a, i), &lda, row<T>(tau, i), work.data(), &lwork, &info);
  });
}

void CpuBackend::qr_q(const Tensor& a, const Tensor& tau) {
  const int m = fortran_int("orgqr", a.size(1)), n = fortran_int("orgqr", a.size(2));
  const int k = fortran_int("orgqr", tau.size(1)), lda = m > 0 ? m : 1;
  with_lapack_dtype("orgqr", a.dtype(), [&](auto t) {
    using T = decltype(t);
    int info = 0, query = -1;
    T asked = 0;
    Lapack<T>::orgqr(&m, &n, &k, nullptr, &lda, nullptr, &asked, &query, &info);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::orgqr(&m, &n, &k, matrix<T>(a, i), &lda, row<T>(tau, i), work.data(), &lwork, &info);
  });
}

void CpuBackend::svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vh, const Tensor& info) {
  const int m = fortran_int("linalg.svd", a.size(1)), n = fortran_int("linalg.svd", a.size(2));
  const int lda = m > 0 ? m : 1;
  const bool vectors = u.defined();
  // 'S': the first min(m, n) singular vectors, 'A': all of them, as u and vh are sized.
  const char jobz = !vectors ? 'N' : u.size(2) == std::min(m, n) && vh.size(1) == std::min(m, n) ? 'S' : 'A';
  const int ldu = vectors && m > 0 ? m : 1, ldvt = vectors && vh.size(1) > 0 ? static_cast<int>(vh.size(1)) : 1;
  with_lapack_dtype("linalg.svd", a.dtype(), [&](auto t) {
    using T = decltype(t);
    std::vector<int> iwork(8 * static_cast<size_t>(std::max(1, std::min(m, n))));
    int query = -1, query_info = 0;
    T asked = 0;
    Lapack<T>::gesdd(&jobz, &m, &n, nullptr, &lda, nullptr, nullptr, &ldu, nullptr, &ldvt, &asked, &query,
                     iwork.data(), &query_info, 1);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::gesdd(&jobz, &m, &n, matrix<T>(a, i), &lda, row<T>(s, i), vectors ? matrix<T>(u, i) : nullptr, &ldu,
                       vectors ? matrix<T>(vh, i) : nullptr, &ldvt, work.data(), &lwork, iwork.data(),
                       static_cast<int*>(info.data_ptr()) + i, 1);
  });
}

void CpuBackend::eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) {
  const int n = fortran_int("linalg.eigh", a.size(1));
  const int lda = n > 0 ? n : 1;
  const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  with_lapack_dtype("linalg.eigh", a.dtype(), [&](auto t) {
    using T = decltype(t);
    int query = -1, query_info = 0, asked_iwork = 0;
    T asked = 0;
    Lapack<T>::syevd(&jobz, &uplo, &n, nullptr, &lda, nullptr, &asked, &query, &asked_iwork, &query, &query_info, 1,
                     1);
    std::vector<T> work = workspace(asked);
    std::vector<int> iwork(std::max(1, asked_iwork));
    const int lwork = static_cast<int>(work.size()), liwork = static_cast<int>(iwork.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::syevd(&jobz, &uplo, &n, matrix<T>(a, i), &lda, row<T>(w, i), work.data(), &lwork, iwork.data(),
                       &liwork, static_cast<int*>(info.data_ptr()) + i, 1, 1);
  });
}

namespace {

// geev of real matrices: the eigenvalues come as real and imaginary parts, and the eigenvectors of a
// conjugate pair (imaginary part > 0 first) as the real and imaginary parts in two columns.
template <class T>
void real_eig(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) {
  using C = std::complex<T>;
  const int n = fortran_int("linalg.eig", a.size(1)), ld = n > 0 ? n : 1, one = 1;
  const bool vectors = v.defined();
  const char jobvl = 'N', jobvr = vectors ? 'V' : 'N';
  int query = -1, query_info = 0;
  T asked = 0;
  Lapack<T>::geev(&jobvl, &jobvr, &n, nullptr, &ld, nullptr, nullptr, nullptr, &one, nullptr, &ld, &asked, &query,
                  &query_info, 1, 1);
  std::vector<T> work = workspace(asked), wr(n), wi(n), vr(vectors ? static_cast<size_t>(n) * n : 1);
  const int lwork = static_cast<int>(work.size());
  for (int64_t i = 0; i < a.size(0); ++i) {
    int* status = static_cast<int*>(info.data_ptr()) + i;
    Lapack<T>::geev(&jobvl, &jobvr, &n, matrix<T>(a, i), &ld, wr.data(), wi.data(), nullptr, &one, vr.data(), &ld,
                    work.data(), &lwork, status, 1, 1);
    C* values = row<C>(w, i);
    for (int j = 0; j < n; ++j) values[j] = C(wr[j], wi[j]);
    if (!vectors || *status != 0) continue;
    C* columns = matrix<C>(v, i);
    for (int j = 0; j < n; ++j) {
      const T* re = vr.data() + static_cast<size_t>(j) * n;
      if (wi[j] == 0) {
        for (int k = 0; k < n; ++k) columns[j * n + k] = C(re[k], 0);
      } else {
        const T* im = re + n;  // the pair's second column
        for (int k = 0; k < n; ++k) {
          columns[j * n + k] = C(re[k], im[k]);
          columns[(j + 1) * n + k] = C(re[k], -im[k]);
        }
        ++j;
      }
    }
  }
}

template <class T>
void complex_eig(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) {
  using C = std::complex<T>;
  const int n = fortran_int("linalg.eig", a.size(1)), ld = n > 0 ? n : 1, one = 1;
  const bool vectors = v.defined();
  const char jobvl = 'N', jobvr = vectors ? 'V' : 'N';
  std::vector<T> rwork(2 * static_cast<size_t>(ld));
  int query = -1, query_info = 0;
  C asked = 0;
  Lapack<T>::complex_geev(&jobvl, &jobvr, &n, nullptr, &ld, nullptr, nullptr, &one, nullptr, &ld, &asked, &query,
                          rwork.data(), &query_info, 1, 1);
  std::vector<C> work(std::max<size_t>(1, static_cast<size_t>(asked.real())));
  const int lwork = static_cast<int>(work.size());
  for (int64_t i = 0; i < a.size(0); ++i)
    Lapack<T>::complex_geev(&jobvl, &jobvr, &n, matrix<C>(a, i), &ld, row<C>(w, i), nullptr, &one,
                            vectors ? matrix<C>(v, i) : nullptr, &ld, work.data(), &lwork, rwork.data(),
                            static_cast<int*>(info.data_ptr()) + i, 1, 1);
}

}  // namespace

void CpuBackend::eig(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) {
  switch (a.dtype()) {
    case ScalarType::Float32: return real_eig<float>(a, w, v, info);
    case ScalarType::Float64: return real_eig<double>(a, w, v, info);
    case ScalarType::ComplexFloat: return complex_eig<float>(a, w, v, info);
    case ScalarType::ComplexDouble: return complex_eig<double>(a, w, v, info);
    default: fail_unsupported_dtype("linalg.eig", a.dtype());
  }
}

}  // namespace tp::cpu
