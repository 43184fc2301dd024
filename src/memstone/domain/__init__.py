"""Pure domain: values, rules, hashing, the analyzer and the manifest. Standard library only."""
