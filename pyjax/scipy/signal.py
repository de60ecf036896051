"""pyjax.scipy.signal: convolution, correlation, detrend and spectral analysis (re-exports)."""
from pyjax._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, csd, detrend, fftconvolve, istft, stft, welch)
