"""provisioner/kube"""
