# Cursor movement, clamping, save and restore.
printf '\033[10;10HX\033[2AU\033[3BD\033[4CR\033[5DL'
printf '\033[2EnextLine\033[1FprevLine'
printf '\033[40GcolumnG\033[15dline15\033[5`col5\033[3a+3\033[2e+2down'
printf '\033[99;99Hclamped\033[0;0Hhome'
printf '\033[20;1H\033[99Aclamped-up'
printf '\033[5;1H\033[99Dleft\033[99Cright'
printf '\033[12;1H\033[1;4;33m\033(0\0337\033[0m\033(Bplain \033[14;1H\0338saved-attrs-and-charset-lqk\033[0m\033(B'
printf '\033[16;5H\033[s\033[18;1Hmoved\033[uCSI-u'
printf '\033[19;1H\bbs-at-col-0\b\b\bBS'
printf '\033[21;1H%s\rCR after pending wrap' "$(printf 'p%.0s' $(seq 1 80))"
printf '\033[23;1H%s\033[Dlast' "$(printf 'q%.0s' $(seq 1 80))"
printf '\033[22;70H'
