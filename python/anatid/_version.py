# The one place anatid's version lives: pyproject.toml (scikit-build-core's regex
# provider), CMakeLists.txt (ANATID_VERSION for anatid_version()) and the package
# all read it from here.
__version__ = "0.1.0"
