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

using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

// LAPACK's and BLAS's Fortran interface: every argument by pointer, 32-bit integers (OpenBLAS's
// default build), and the length of each character argument passed last, as gfortran does. A
// routine with one signature in the four precisions is declared for each of them: P is the
// precision's letter, T the element type and R its real type.
#define TP_FOUR_PRECISIONS(ROUTINE) ROUTINE(s, float, float) ROUTINE(d, double, double) \
  ROUTINE(c, cfloat, float) ROUTINE(z, cdouble, double)
#define TP_GETRF(P, T, R) void P##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
#define TP_GETRS(P, T, R)                                                                                       \
  void P##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, \
                 T* b, const int* ldb, int* info, size_t trans_len);
#define TP_SYTRF(P, T, R)                                                                                    \
  void P##sytrf_(const char* uplo, const int* n, T* a, const int* lda, int* ipiv, T* work, const int* lwork, \
                 int* info, size_t uplo_len);
#define TP_SYTRS(P, T, R)                                                                                      \
  void P##sytrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, \
                 T* b, const int* ldb, int* info, size_t uplo_len);
#define TP_POTRF(P, T, R) void P##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);
#define TP_TRSM(P, T, R)                                                                                        \
  void P##trsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,          \
                const int* n, const T* alpha, const T* a, const int* lda, T* b, const int* ldb, size_t, size_t, \
                size_t, size_t);
#define TP_GEQRF(P, T, R) \
  void P##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
extern "C" {
TP_FOUR_PRECISIONS(TP_GETRF)
TP_FOUR_PRECISIONS(TP_GETRS)
TP_FOUR_PRECISIONS(TP_SYTRF)
TP_FOUR_PRECISIONS(TP_SYTRS)
TP_FOUR_PRECISIONS(TP_POTRF)
TP_FOUR_PRECISIONS(TP_TRSM)
TP_FOUR_PRECISIONS(TP_GEQRF)
// The Hermitian LDL factorization (the real one is sytrf's).
void chetrf_(const char* uplo, const int* n, cfloat* a, const int* lda, int* ipiv, cfloat* work, const int* lwork,
             int* info, size_t uplo_len);
void zhetrf_(const char* uplo, const int* n, cdouble* a, const int* lda, int* ipiv, cdouble* work, const int* lwork,
             int* info, size_t uplo_len);
void chetrs_(const char* uplo, const int* n, const int* nrhs, const cfloat* a, const int* lda, const int* ipiv,
             cfloat* b, const int* ldb, int* info, size_t uplo_len);
void zhetrs_(const char* uplo, const int* n, const int* nrhs, const cdouble* a, const int* lda, const int* ipiv,
             cdouble* b, const int* ldb, int* info, size_t uplo_len);
// Q of geqrf's reflectors: orgqr (real), ungqr (complex).
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, cfloat* a, const int* lda, const cfloat* tau, cfloat* work,
             const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, cdouble* a, const int* lda, const cdouble* tau, cdouble* work,
             const int* lwork, int* info);
// The complex SVD and Hermitian eigensolver take a real workspace besides the complex one.
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             size_t jobz_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t jobz_len);
void cgesdd_(const char* jobz, const int* m, const int* n, cfloat* a, const int* lda, float* s, cfloat* u,
             const int* ldu, cfloat* vt, const int* ldvt, cfloat* work, const int* lwork, float* rwork, int* iwork,
             int* info, size_t jobz_len);
void zgesdd_(const char* jobz, const int* m, const int* n, cdouble* a, const int* lda, double* s, cdouble* u,
             const int* ldu, cdouble* vt, const int* ldvt, cdouble* work, const int* lwork, double* rwork,
             int* iwork, int* info, size_t jobz_len);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void cheevd_(const char* jobz, const char* uplo, const int* n, cfloat* a, const int* lda, float* w, cfloat* work,
             const int* lwork, float* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
             size_t jobz_len, size_t uplo_len);
void zheevd_(const char* jobz, const char* uplo, const int* n, cdouble* a, const int* lda, double* w, cdouble* work,
             const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
             size_t jobz_len, size_t uplo_len);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, cfloat* a, const int* lda, cfloat* w, cfloat* vl,
            const int* ldvl, cfloat* vr, const int* ldvr, cfloat* work, const int* lwork, float* rwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, cdouble* a, const int* lda, cdouble* w, cdouble* vl,
            const int* ldvl, cdouble* vr, const int* ldvr, cdouble* work, const int* lwork, double* rwork, int* info,
            size_t jobvl_len, size_t jobvr_len);
}
#undef TP_FOUR_PRECISIONS
#undef TP_GETRF
#undef TP_GETRS
#undef TP_SYTRF
#undef TP_SYTRS
#undef TP_POTRF
#undef TP_TRSM
#undef TP_GEQRF

namespace tp::cpu {

namespace {

// The real routines as the complex ones' signatures, so that one kernel calls both: the real SVD
// and symmetric eigensolver ignore the real workspace the complex ones take.
template <auto gesdd, class T>
void gesdd_without_rwork(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u,
                         const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, T* /*rwork*/, int* iwork,
                         int* info, size_t jobz_len) {
  gesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, jobz_len);
}

template <auto syevd, class T>
void syevd_without_rwork(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,
                         const int* lwork, T* /*rwork*/, const int* /*lrwork*/, int* iwork, const int* liwork,
                         int* info, size_t jobz_len, size_t uplo_len) {
  syevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, jobz_len, uplo_len);
}

// The routines of one element type, picked by T. For a real T the Hermitian routines are the
// symmetric ones (hetrf is sytrf, ungqr orgqr, heevd syevd).
template <class T>
struct Lapack;

#define TP_SAME_SIGNATURE(P)                 \
  static constexpr auto getrf = P##getrf_;   \
  static constexpr auto getrs = P##getrs_;   \
  static constexpr auto sytrf = P##sytrf_;   \
  static constexpr auto sytrs = P##sytrs_;   \
  static constexpr auto potrf = P##potrf_;   \
  static constexpr auto trsm = P##trsm_;     \
  static constexpr auto geqrf = P##geqrf_;

template <>
struct Lapack<float> {
  using Real = float;
  TP_SAME_SIGNATURE(s)
  static constexpr auto hetrf = ssytrf_;
  static constexpr auto hetrs = ssytrs_;
  static constexpr auto ungqr = sorgqr_;
  static constexpr auto gesdd = gesdd_without_rwork<sgesdd_, float>;
  static constexpr auto heevd = syevd_without_rwork<ssyevd_, float>;
  static constexpr auto geev = sgeev_;
  static constexpr auto complex_geev = cgeev_;
};

template <>
struct Lapack<double> {
  using Real = double;
  TP_SAME_SIGNATURE(d)
  static constexpr auto hetrf = dsytrf_;
  static constexpr auto hetrs = dsytrs_;
  static constexpr auto ungqr = dorgqr_;
  static constexpr auto gesdd = gesdd_without_rwork<dgesdd_, double>;
  static constexpr auto heevd = syevd_without_rwork<dsyevd_, double>;
  static constexpr auto geev = dgeev_;
  static constexpr auto complex_geev = zgeev_;
};

template <>
struct Lapack<cfloat> {
  using Real = float;
  TP_SAME_SIGNATURE(c)
  static constexpr auto hetrf = chetrf_;
  static constexpr auto hetrs = chetrs_;
  static constexpr auto ungqr = cungqr_;
  static constexpr auto gesdd = cgesdd_;
  static constexpr auto heevd = cheevd_;
};

template <>
struct Lapack<cdouble> {
  using Real = double;
  TP_SAME_SIGNATURE(z)
  static constexpr auto hetrf = zhetrf_;
  static constexpr auto hetrs = zhetrs_;
  static constexpr auto ungqr = zungqr_;
  static constexpr auto gesdd = zgesdd_;
  static constexpr auto heevd = zheevd_;
};
#undef TP_SAME_SIGNATURE

int fortran_int(const char* op, int64_t n) {
  TP_CHECK(n <= INT_MAX, "[", op, "] a matrix dimension of ", n, " is more than LAPACK's 32-bit integers hold");
  return static_cast<int>(n);
}

// Runs f(T{}) for float32, float64, complex64 and complex128, the precisions LAPACK has.
template <class F>
void with_lapack_dtype(const char* op, ScalarType dtype, const F& f) {
  visit_dtype<DTypes::AllAndComplex>(op, dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, cfloat> ||
                  std::is_same_v<T, cdouble>)
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
// floating-point number (the real part of a complex one) in the first element.
template <class T>
std::vector<T> workspace(T asked) {
  return std::vector<T>(std::max<size_t>(1, static_cast<size_t>(std::real(asked))));
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

void CpuBackend::lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint) {
  const int n = fortran_int("lu_solve", b.size(1)), k = fortran_int("lu_solve", b.size(2));
  const int ld = n > 0 ? n : 1;
  const char trans = adjoint ? 'C' : 'N';  // (for real matrices 'C' is the transpose)
  with_lapack_dtype("lu_solve", b.dtype(), [&](auto t) {
    using T = decltype(t);
    int info = 0;  // only argument errors, which the op's checks rule out
    for (int64_t i = 0; i < b.size(0); ++i)
      Lapack<T>::getrs(&trans, &n, &k, matrix<T>(lu, i), &ld, static_cast<const int*>(pivots.data_ptr()) + i * n,
                       matrix<T>(b, i), &ld, &info, 1);
  });
}

void CpuBackend::ldl_factor(const Tensor& a, const Tensor& pivots, const Tensor& info, bool hermitian) {
  const int n = fortran_int("linalg.ldl_factor", a.size(1));
  const int lda = n > 0 ? n : 1;
  const char uplo = 'L';
  with_lapack_dtype("linalg.ldl_factor", a.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto factor = hermitian ? Lapack<T>::hetrf : Lapack<T>::sytrf;
    int query = -1, query_info = 0;
    T asked = 0;
    factor(&uplo, &n, nullptr, &lda, nullptr, &asked, &query, &query_info, 1);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      factor(&uplo, &n, matrix<T>(a, i), &lda, static_cast<int*>(pivots.data_ptr()) + i * n, work.data(), &lwork,
             static_cast<int*>(info.data_ptr()) + i, 1);
  });
}

void CpuBackend::ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) {
  const int n = fortran_int("linalg.ldl_solve", b.size(1)), k = fortran_int("linalg.ldl_solve", b.size(2));
  const int lda = n > 0 ? n : 1;
  const char uplo = 'L';
  with_lapack_dtype("linalg.ldl_solve", b.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto solve = hermitian ? Lapack<T>::hetrs : Lapack<T>::sytrs;
    int info = 0;  // only argument errors, which the op's checks rule out
    for (int64_t i = 0; i < b.size(0); ++i)
      solve(&uplo, &n, &k, matrix<T>(ld, i), &lda, static_cast<const int*>(pivots.data_ptr()) + i * n,
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
      // lets a NaN through, so the factor's (real) diagonal is checked here.
      for (int j = 0; *code == 0 && j < n; ++j)
        if (!(std::real(matrix<T>(a, i)[j * (n + 1)]) > 0)) *code = j + 1;
    }
  });
}

void CpuBackend::triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool adjoint, bool unitriangular) {
  const int n = fortran_int("triangular_solve", b.size(1)), k = fortran_int("triangular_solve", b.size(2));
  const int ld = n > 0 ? n : 1;
  const char side = 'L', uplo = upper ? 'U' : 'L', trans = adjoint ? 'C' : 'N', diag = unitriangular ? 'U' : 'N';
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
    Lapack<T>::ungqr(&m, &n, &k, nullptr, &lda, nullptr, &asked, &query, &info);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::ungqr(&m, &n, &k, matrix<T>(a, i), &lda, row<T>(tau, i), work.data(), &lwork, &info);
  });
}

void CpuBackend::svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vh, const Tensor& info) {
  const int m = fortran_int("linalg.svd", a.size(1)), n = fortran_int("linalg.svd", a.size(2));
  const int lda = m > 0 ? m : 1;
  const bool vectors = u.defined();
  // 'S': the first min(m, n) singular vectors, 'A': all of them, as u and vh are sized.
  const char jobz = !vectors ? 'N' : u.size(2) == std::min(m, n) && vh.size(1) == std::min(m, n) ? 'S' : 'A';
  const int ldu = vectors && m > 0 ? m : 1, ldvt = vectors && vh.size(1) > 0 ? static_cast<int>(vh.size(1)) : 1;
  const size_t small = std::min(m, n), large = std::max(m, n);
  // The complex routines' real workspace, of the size their documentation gives (no query).
  const size_t rwork_size = std::max<size_t>(
      1, vectors ? std::max(5 * small * small + 5 * small, 2 * large * small + 2 * small * small + small) : 7 * small);
  with_lapack_dtype("linalg.svd", a.dtype(), [&](auto t) {
    using T = decltype(t);
    using Real = typename Lapack<T>::Real;
    std::vector<int> iwork(8 * std::max<size_t>(1, small));
    std::vector<Real> rwork(is_complex_v<T> ? rwork_size : 1);
    int query = -1, query_info = 0;
    T asked = 0;
    Lapack<T>::gesdd(&jobz, &m, &n, nullptr, &lda, nullptr, nullptr, &ldu, nullptr, &ldvt, &asked, &query,
                     rwork.data(), iwork.data(), &query_info, 1);
    std::vector<T> work = workspace(asked);
    const int lwork = static_cast<int>(work.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::gesdd(&jobz, &m, &n, matrix<T>(a, i), &lda, row<Real>(s, i), vectors ? matrix<T>(u, i) : nullptr,
                       &ldu, vectors ? matrix<T>(vh, i) : nullptr, &ldvt, work.data(), &lwork, rwork.data(),
                       iwork.data(), static_cast<int*>(info.data_ptr()) + i, 1);
  });
}

void CpuBackend::eigh(const Tensor& a, const Tensor& w, const Tensor& info, bool upper, bool vectors) {
  const int n = fortran_int("linalg.eigh", a.size(1));
  const int lda = n > 0 ? n : 1;
  const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  with_lapack_dtype("linalg.eigh", a.dtype(), [&](auto t) {
    using T = decltype(t);
    using Real = typename Lapack<T>::Real;
    int query = -1, query_info = 0, asked_iwork = 0;
    T asked = 0;
    Real asked_rwork = 1;  // (the real routines take no real workspace, and leave it)
    Lapack<T>::heevd(&jobz, &uplo, &n, nullptr, &lda, nullptr, &asked, &query, &asked_rwork, &query, &asked_iwork,
                     &query, &query_info, 1, 1);
    std::vector<T> work = workspace(asked);
    std::vector<Real> rwork = workspace(asked_rwork);
    std::vector<int> iwork(std::max(1, asked_iwork));
    const int lwork = static_cast<int>(work.size()), lrwork = static_cast<int>(rwork.size());
    const int liwork = static_cast<int>(iwork.size());
    for (int64_t i = 0; i < a.size(0); ++i)
      Lapack<T>::heevd(&jobz, &uplo, &n, matrix<T>(a, i), &lda, row<Real>(w, i), work.data(), &lwork, rwork.data(),
                       &lrwork, iwork.data(), &liwork, static_cast<int*>(info.data_ptr()) + i, 1, 1);
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
