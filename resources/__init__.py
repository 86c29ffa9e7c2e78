"""Files shipped with MeaningBench: demo data written by this project, style sheets, icons."""
