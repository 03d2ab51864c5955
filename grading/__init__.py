"""CUAD clause-extraction grader: data, samples, extraction runs, grades, label audit."""
