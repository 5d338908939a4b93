"""Reports built on the scores: tables and figures (SMURF's system report), for people rather than programs."""
