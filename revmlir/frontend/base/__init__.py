"""What every part of the Python frontend stands on: types, source, specializations, derived programs."""
