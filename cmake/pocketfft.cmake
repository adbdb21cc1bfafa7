# pocketfft, the FFT library of NumPy and SciPy and of PyTorch's builds without MKL (docs/fft.md
# says why it is ours): one BSD-licensed header. No Debian package carries it, so it comes from
# PyPI, in the source distribution of the NumPy release that requirements-dev.txt pins, checked by
# its hash and unpacked once for every build of this tree.
set(TP_POCKETFFT_NUMPY numpy-2.4.6)
set(TP_POCKETFFT_URL "https://files.pythonhosted.org/packages/d0/ad/fed0499ce6a338d2a03ebae59cd15093910c8875328855781952abf6c2fe/${TP_POCKETFFT_NUMPY}.tar.gz")
set(TP_POCKETFFT_SHA256 f3a3570c4a2a16746ac2c31a7c7c7b0c186b95ce902e33db6f28094ed7387dda)
set(TP_POCKETFFT_DIR "${PROJECT_SOURCE_DIR}/build/_deps/${TP_POCKETFFT_NUMPY}/numpy/fft/pocketfft")

if(NOT EXISTS "${TP_POCKETFFT_DIR}/pocketfft_hdronly.h")
  set(archive "${PROJECT_SOURCE_DIR}/build/_deps/${TP_POCKETFFT_NUMPY}.tar.gz")
  message(STATUS "Downloading pocketfft (from ${TP_POCKETFFT_NUMPY}'s source on PyPI)")
  file(DOWNLOAD "${TP_POCKETFFT_URL}" "${archive}" EXPECTED_HASH SHA256=${TP_POCKETFFT_SHA256} TLS_VERIFY ON
       STATUS status)
  list(GET status 0 code)
  if(NOT code EQUAL 0)
    list(GET status 1 reason)
    file(REMOVE "${archive}")
    message(FATAL_ERROR "Could not download ${TP_POCKETFFT_URL}: ${reason}")
  endif()
  file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${PROJECT_SOURCE_DIR}/build/_deps"
       PATTERNS "${TP_POCKETFFT_NUMPY}/numpy/fft/pocketfft/*")
  file(REMOVE "${archive}")
endif()
