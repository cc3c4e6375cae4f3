# ?1049 saves the cursor and clears the alternate buffer; ?1048 saves alone.
for i in $(seq 1 8); do printf 'normal %02d\n' "$i"; done
printf '\033[1;31mred at the saved cursor'
printf '\033[?1049h'
printf '\033[0m\033[12;30Hon the alternate screen'
printf '\033[?1049l'
printf ' restored (still red?)\033[0m\n'
printf '\033[?1049h\033[1;1Hsecond visit\033[?1049l'
printf '\033[3;5H\033[?1048h\033[20;1Hmoved\033[?1048lback at 3;5'
printf '\033[?1049h\033[?1049h\033[5;5Hnested enter\033[?1049l\033[?1049l'
printf '\033[10;1Hend'
