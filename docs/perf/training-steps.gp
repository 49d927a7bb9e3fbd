# tbench plot: Training and inference steps: samples/s vs batch (median)
# Render it again: cd to this folder, then: gnuplot training-steps.gp
set encoding utf8
set title 'Training and inference steps: samples/s vs batch (median)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'batch (samples per step)'
set logscale x 2
set ylabel 'samples/s (batch / median)'
set logscale y
set format y '%.0s%c'
set offsets graph 0.05, graph 0.05, 0, 0
set terminal pngcairo size 900,576 font 'sans,9' noenhanced
set output 'training-steps.png'
plot 'training-steps.dat' index 0 using 1:2 with linespoints lw 2 dt 1 title 'mlp_train_step cpu[isa=auto,threads=1] f32', \
     'training-steps.dat' index 1 using 1:2 with linespoints lw 2 dt 1 title 'mlp_train_step blas[threads=1] f32', \
     'training-steps.dat' index 2 using 1:2 with linespoints lw 2 dt 1 title 'mlp_infer_step cpu[isa=auto,threads=1] f32', \
     'training-steps.dat' index 3 using 1:2 with linespoints lw 2 dt 1 title 'mlp_infer_step blas[threads=1] f32', \
     'training-steps.dat' index 4 using 1:2 with linespoints lw 2 dt 1 title 'cnn_train_step cpu[isa=auto,threads=1] f32', \
     'training-steps.dat' index 5 using 1:2 with linespoints lw 2 dt 1 title 'cnn_train_step blas[threads=1] f32', \
     'training-steps.dat' index 6 using 1:2 with linespoints lw 2 dt 1 title 'cnn_infer_step cpu[isa=auto,threads=1] f32', \
     'training-steps.dat' index 7 using 1:2 with linespoints lw 2 dt 1 title 'cnn_infer_step blas[threads=1] f32', \
     'training-steps.dat' index 8 using 1:2 with linespoints lw 2 dt 2 title 'mlp_train_step torch[threads=1] f32', \
     'training-steps.dat' index 9 using 1:2 with linespoints lw 2 dt 2 title 'mlp_infer_step torch[threads=1] f32', \
     'training-steps.dat' index 10 using 1:2 with linespoints lw 2 dt 2 title 'cnn_train_step torch[threads=1] f32', \
     'training-steps.dat' index 11 using 1:2 with linespoints lw 2 dt 2 title 'cnn_infer_step torch[threads=1] f32'
set output
