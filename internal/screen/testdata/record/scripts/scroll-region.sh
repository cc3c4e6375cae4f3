# Scroll regions: DECSTBM with LF, IND, RI, NEL, SU, SD, IL and DL.
for i in $(seq 1 30); do printf 'line %02d of the normal screen\n' "$i"; done
printf '\033[5;15r'                  # region rows 5..15; DECSTBM homes the cursor
printf '\033[15;1Hbottom of region\n\n'  # LF at the bottom scrolls the region
printf 'after two LFs'
printf '\033D\033D'                  # IND
printf '\033[5;1Htop of region'
printf '\033M\033M'                  # RI at the top scrolls down
printf '\033[10;1Hmiddle\033ENEL here'
printf '\033[2S'                     # SU
printf '\033[3T'                     # SD
printf '\033[8;1H\033[2L'            # IL inside the region
printf '\033[12;1H\033[1M'           # DL inside the region
printf '\033[20;1Houtside\033[2L'    # IL outside the region does nothing
printf '\033[24;1Hbottom row, outside the region\n'   # LF at the last row, outside: no scroll
printf '\033[1;10r'                  # a region at the top feeds the scrollback
printf '\033[10;1H'
for i in 1 2 3; do printf '\nfrom the top region %d' "$i"; done
printf '\033[r'                      # reset
printf '\033[22;1Hregion reset'
