# Line edits, each on its own row, with a background color set (BCE).
fill() { printf '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'; }
row() { printf '\033[%d;1H' "$1"; fill; printf '\033[%d;21H\033[44m' "$1"; }
row 1; printf '\033[K';  printf '\033[0m EL0'
row 2; printf '\033[0K'; printf '\033[0m EL0'
row 3; printf '\033[1K'; printf '\033[0m EL1'
row 4; printf '\033[2K'; printf '\033[0m EL2'
row 5; printf '\033[5X'; printf '\033[0m ECH5'
row 6; printf '\033[X';  printf '\033[0m ECH'
row 7; printf '\033[99X'; printf '\033[0m ECH99'
row 8; printf '\033[4@'; printf '\033[0m ICH4'
row 9; printf '\033[@';  printf '\033[0m ICH'
row 10; printf '\033[4P'; printf '\033[0m DCH4'
row 11; printf '\033[P';  printf '\033[0m DCH'
row 12; printf '\033[99P'; printf '\033[0m DCH99'
row 13; printf '\033[0m'; printf '\033[13;1Hfull width line%s' "$(printf '.%.0s' $(seq 1 65))"; printf '\033[13;80H\033[2@'
row 14; printf '\033[0m'
for i in 15 16 17 18 19 20 21 22; do printf '\033[%d;1Hrow %d' "$i" "$i"; done
printf '\033[16;1H\033[45m\033[2L\033[0mIL2 at 16'
printf '\033[20;1H\033[46m\033[M\033[0mDL at 20'
printf '\033[24;1H\033[L\033[0mIL on the last row'
printf '\033[14;30H\033[31;43m\033[5X\033[0m'
printf '\033[1;1H中文\033[1;2H\033[1X'   # ECH on the right half of a wide char
printf '\033[2;3H中文\033[2;4H\033[1@'   # ICH inside a wide char
printf '\033[3;5H中文\033[3;6H\033[1P'   # DCH inside a wide char
printf '\033[23;1H'
