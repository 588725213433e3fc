"""An example third-party vectorport adapter over a plain dict."""
