"""Bash as the permission engine sees it: a line parsed into the commands it will run (`parse`, `parsed`,
`words`), wrappers and their real options unwrapped (`unwrap`, `inner`, `options`, `program_options`,
`runners`), code no rule can see found (`hidden`, `project_code`), programs known by their files
(`identity`), paths followed (`shell_paths`); and the line run as a process group (`process`)."""
