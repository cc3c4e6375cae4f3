# Everything set, then RIS.
for i in $(seq 1 30); do printf 'before reset %02d\n' "$i"; done
printf '\033]2;title before reset\007\033[?1h\033[?2004h\033[?1003h\033[?25l\033[4h\033[5;10r\033[?6h\033[1;41m\033[3g\033[5G\033H'
printf '\033c'
printf 'after RIS: plain, home\n'
printf 'default tab stops again:\tx\ty\n'
printf '\033[?1049h\033[?1049l'
