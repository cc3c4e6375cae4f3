# Scrollback, then the alternate buffer through ?47 and ?1047.
for i in $(seq 1 40); do printf 'normal %02d\n' "$i"; done
printf 'cursor here'
printf '\033[?47h'                 # no clear, no cursor save
printf '\033[2;1Halt through 47'
printf '\033[?47l'
printf ' back on normal'
printf '\033[?1047h\033[3;1Halt through 1047'
printf '\033[?1047l'              # leaving 1047 clears the alternate buffer
printf '\033[?47h\033[5;1Hagain through 47'
for i in $(seq 1 30); do printf '\nalt line %02d' "$i"; done   # the alternate buffer has no scrollback
printf '\033[10;10H'
