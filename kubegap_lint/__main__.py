import gc

# Start-up allocates thousands of long-lived objects (modules, classes, the catalog) and no
# garbage cycles: the cyclic collector stays off until the settings are loaded (cli/main.py).
gc.disable()

from kubegap_lint.cli.entry import main  # noqa: E402

if __name__ == "__main__":
    main()
