"""Generated modules (codegen/gen_icd.py). Do not edit them by hand."""
