"""Safe file access for the file tools: open once and act on what was opened (`safeopen`), ask before a path
leads out of the project or into what steers git or the agents (`access`), read and write text exactly
(`textfile`), and skip what listings and searches ignore (`ignore`, `globpattern`)."""
